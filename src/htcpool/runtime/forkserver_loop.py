"""The fork server's own loop: the process ``forkserver.ForkServer`` starts, which imports once
what its children run and then forks one child per request (the protocol, and why:
``forkserver``'s docstring).

``python -m htcpool.runtime.forkserver_loop FD`` serves a startd: each child becomes a starter.
``python -m htcpool.runtime.forkserver_loop FD daemon`` serves a master: the server imports every
daemon's service (``runtime.services``) and each child becomes one daemon, as
``python -m htcpool.runtime.services ARGS`` would, with the environment the request gives. The
child does not run the daemon from inside the server's loop: it leaves the loop by an exception
(``BecomeDaemon``) that ``main`` catches, so that the daemon runs and ends as a process of its
own would (its non-daemon threads joined, its exit handlers run, its exit status its return
value). Either serves the UNIX socket ``FD`` until the other end closes it.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import sys


# ---------------------------------------------------------------------------- the server
def _leave_server(conn: socket.socket, wakeup: tuple[int, int], fds: list[int]) -> None:
    """In a forked child: the server's signal handling undone, its socket and wake-up pipe
    closed, ``fds`` moved to descriptors 0, 1, 2 (and 3)."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    conn.close()
    for fd in wakeup:
        os.close(fd)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)


def _child(conn: socket.socket, wakeup: tuple[int, int], fds: list[int]) -> None:
    """In the forked child: become a starter on ``fds`` (never returns)."""
    code = 70
    try:
        _leave_server(conn, wakeup, fds)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        from htcpool.runtime import starter

        starter.run()
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


class BecomeDaemon(Exception):  # noqa: N818 (not an error: the child's way out of the loop)
    """Raised in a forked child of a daemon server: run the daemon of ``argv``."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(" ".join(argv))
        self.argv = argv

    def run(self) -> int:
        from htcpool.runtime import services

        return services.main(self.argv)


def _daemon_request(payload: str) -> tuple[list[str], dict[str, str], str] | None:
    """A ``D`` request's JSON: the daemon's arguments, its environment and its process title."""
    try:
        request = json.loads(payload)
        argv, env, title = request["argv"], request["env"], request["title"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(argv, list) and all(isinstance(a, str) for a in argv) and isinstance(env, dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()) and isinstance(title, str)):
        return None
    return argv, env, title


def _daemon_child(conn: socket.socket, wakeup: tuple[int, int], fds: list[int], argv: list[str],
                  env: dict[str, str], title: str) -> None:
    """In the forked child: stdin, stdout and stderr from ``fds``, the keep-alive pipe (the fourth)
    as descriptor 3, nothing else of the server's open; then out of the loop (``BecomeDaemon``)."""
    _leave_server(conn, wakeup, fds)
    os.closerange(len(fds), os.sysconf("SC_OPEN_MAX"))
    _set_title(title)  # before the environment changes, which moves what setproctitle rewrites
    os.environ.clear()
    os.environ.update(env)
    raise BecomeDaemon(argv)


def _set_title(title: str) -> None:
    """The command line ``ps`` shows for this process (left as it is without setproctitle)."""
    try:
        from setproctitle import setproctitle
    except ImportError:
        return
    setproctitle(title)


def _fork(conn: socket.socket, wakeup: tuple[int, int], request: str, fds: list[int], kind: str) -> None:
    """Serve one request: ``S <n>`` (a starter, three descriptors) of a startd's server, ``D <n>
    <json>`` (a daemon, four) of a master's."""
    parts = request.split(" ", 2)
    daemon = _daemon_request(parts[2]) if kind == "daemon" and len(parts) == 3 and parts[0] == "D" else None
    wanted = ("D", 4) if kind == "daemon" else ("S", 3)
    if (parts[0], len(fds)) != wanted or (kind == "daemon" and daemon is None) \
            or (kind != "daemon" and len(parts) != 2):
        for fd in fds:
            os.close(fd)
        conn.sendall(f"F {parts[1].strip() if len(parts) > 1 else '?'} malformed request\n".encode())
        return
    parts[1] = parts[1].strip()
    try:
        pid = os.fork()
    except OSError as e:
        conn.sendall(f"F {parts[1]} {e}\n".encode())
        pid = -1
    if pid == 0:
        if daemon is not None:
            _daemon_child(conn, wakeup, fds, *daemon)
        _child(conn, wakeup, fds)
    for fd in fds:
        os.close(fd)
    if pid < 0:
        return
    pidfd = -1
    with contextlib.suppress(OSError, AttributeError):
        pidfd = os.pidfd_open(pid)
    try:
        socket.send_fds(conn, [f"P {parts[1]} {pid} {int(pidfd >= 0)}\n".encode()], [pidfd] if pidfd >= 0 else [])
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _reap(conn: socket.socket) -> None:
    """Report every child that ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        with contextlib.suppress(OSError):
            conn.sendall(f"E {pid} {status}\n".encode())


#: what a server imports before it forks, by the kind of children it makes
KINDS = ("starter", "daemon")


def _preload(kind: str) -> None:
    """Import, once, what every child of this server runs."""
    if kind == "daemon":
        import importlib

        from htcpool.runtime.services import SERVICES

        for module, _ in SERVICES.values():
            importlib.import_module(module)
    else:
        from htcpool.runtime import starter  # noqa: F401


def serve(fd: int, kind: str = "starter") -> int:
    """The server's loop on the socket ``fd`` until its client closes its end."""
    conn = socket.socket(fileno=fd)
    conn.setblocking(True)
    wakeup = os.pipe()
    os.set_blocking(wakeup[0], False)
    os.set_blocking(wakeup[1], False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wakeup[1])
    _preload(kind)
    size = 1 << 20 if kind == "daemon" else 256  # a daemon's request carries its environment

    selector = selectors.DefaultSelector()
    selector.register(conn, selectors.EVENT_READ, "conn")
    selector.register(wakeup[0], selectors.EVENT_READ, "wakeup")
    while True:
        for key, _ in selector.select(timeout=1.0):
            if key.data == "wakeup":
                with contextlib.suppress(OSError):
                    os.read(wakeup[0], 512)
                continue
            try:
                data, fds, _flags, _addr = socket.recv_fds(conn, size, 4)
            except OSError:
                return 0
            if not data:
                return 0
            _fork(conn, wakeup, data.decode(errors="replace"), fds, kind)
        _reap(conn)



def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not 1 <= len(args) <= 2 or not args[0].isdigit() or args[1:] not in ([], *([k] for k in KINDS)):
        print("usage: python -m htcpool.runtime.forkserver_loop FD [daemon]", file=sys.stderr)
        return 2
    try:
        return serve(int(args[0]), args[1] if len(args) == 2 else "starter")
    except BecomeDaemon as child:  # a forked child, out of the server's loop
        return child.run()


__all__ = ["KINDS", "BecomeDaemon", "main", "serve"]

if __name__ == "__main__":
    sys.exit(main())
