"""The fork server's own loop: the process ``forkserver.ForkServer`` starts, which imports the
starter once and then forks one starter per request from its startd (the protocol, and why:
``forkserver``'s docstring).

``python -m htcpool.runtime.forkserver_loop FD`` serves the UNIX socket ``FD`` until the startd
closes its end.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import socket
import sys


# ---------------------------------------------------------------------------- the server
def _child(conn: socket.socket, wakeup: tuple[int, int], fds: list[int]) -> None:
    """In the forked child: become a starter on ``fds`` (never returns)."""
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        conn.close()
        for fd in wakeup:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
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


def _fork(conn: socket.socket, wakeup: tuple[int, int], request: str, fds: list[int]) -> None:
    """Serve one ``S <n>`` request."""
    parts = request.split()
    if len(parts) != 2 or parts[0] != "S" or len(fds) != 3:
        for fd in fds:
            os.close(fd)
        conn.sendall(f"F {parts[1] if len(parts) > 1 else '?'} malformed request\n".encode())
        return
    try:
        pid = os.fork()
    except OSError as e:
        conn.sendall(f"F {parts[1]} {e}\n".encode())
        pid = -1
    if pid == 0:
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


def serve(fd: int) -> int:
    """The server's loop on the socket ``fd`` until the startd closes its end."""
    conn = socket.socket(fileno=fd)
    conn.setblocking(True)
    wakeup = os.pipe()
    os.set_blocking(wakeup[0], False)
    os.set_blocking(wakeup[1], False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wakeup[1])
    from htcpool.runtime import starter  # noqa: F401  (imported once, here, for every child)

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
                data, fds, _flags, _addr = socket.recv_fds(conn, 256, 3)
            except OSError:
                return 0
            if not data:
                return 0
            _fork(conn, wakeup, data.decode(errors="replace"), fds)
        _reap(conn)



def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m htcpool.runtime.forkserver_loop FD", file=sys.stderr)
        return 2
    return serve(int(args[0]))


__all__ = ["main", "serve"]

if __name__ == "__main__":
    sys.exit(main())
