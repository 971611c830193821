"""Hosts for tests, made of Linux network namespaces: a star of veth pairs around one bridge.

``Hosts(names)`` makes one namespace per name, each with its loopback up and one veth whose other
end is a port of a bridge in the test's own namespace. The addresses are in 198.18.0.0/15, the
range kept for benchmarking networks (RFC 2544), so they meet no real network: host ``i`` (from 1)
is ``198.18.<n>.<i>``, the bridge ``198.18.<n>.254``, ``n`` the first subnet from one chosen by the
test's pid that no interface here uses, so that two runs on one machine do not share it. Names carry the pid too. ``close()`` kills what still
runs in the namespaces and removes them, their veths and the bridge; it is safe to call after a
failure part way. ``unavailable()`` says why namespaces cannot be made here (not root, no ``ip``,
a kernel or container that refuses), or None.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)
    if check and done.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done


def unavailable() -> str | None:
    """Why this machine cannot make network namespaces for a test; None when it can."""
    if os.geteuid() != 0:
        return "making network namespaces needs root"
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    probe = f"htcprobe{os.getpid()}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add failed: {made.stderr.strip()}"
    try:
        inside = _ip("netns", "exec", probe, "true", check=False)
        if inside.returncode != 0:
            return f"ip netns exec failed: {inside.stderr.strip()}"
    finally:
        _ip("netns", "del", probe, check=False)
    return None


def _free_subnet(start: int) -> str:
    """A 198.18.<n> no interface of this namespace has an address in, trying from ``start``."""
    used = _ip("-o", "-4", "addr", "show", check=False).stdout
    for step in range(250):
        subnet = f"198.18.{(start + step) % 250}"
        if f" {subnet}." not in used:
            return subnet
    raise RuntimeError("every 198.18.<n>.0/24 subnet has an address here already")


class Hosts:
    """Namespaces named after ``names``, on one bridge (module docstring)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        pid = os.getpid()
        self.subnet = _free_subnet(pid % 250)
        self.bridge = f"htb{pid}"
        self.namespaces = {name: f"htcp{pid}-{name}" for name in names}
        self.addresses = {name: f"{self.subnet}.{i}" for i, name in enumerate(names, start=1)}
        self._made: list[str] = []
        self._bridge_made = False
        try:
            self._make(names)
        except BaseException:
            self.close()
            raise

    def _make(self, names: tuple[str, ...]) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        self._bridge_made = True
        _ip("addr", "add", f"{self.subnet}.254/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for i, name in enumerate(names, start=1):
            ns = self.namespaces[name]
            _ip("netns", "add", ns)
            self._made.append(ns)
            outside, inside = f"{self.bridge}v{i}", f"{self.bridge}p{i}"
            _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
            _ip("link", "set", inside, "netns", ns)
            _ip("link", "set", outside, "master", self.bridge, "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "addr", "add", f"{self.addresses[name]}/24", "dev", inside)
            _ip("-n", ns, "link", "set", inside, "up")

    def command(self, name: str, *argv: str) -> list[str]:
        """``argv`` run on host ``name``."""
        return ["ip", "netns", "exec", self.namespaces[name], *argv]

    def run(self, name: str, *argv: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.command(name, *argv), capture_output=True, text=True, env=env,
                              timeout=timeout)

    def _kill_inside(self, ns: str) -> None:
        for _ in range(50):
            pids = [int(p) for p in _ip("netns", "pids", ns, check=False).stdout.split() if p.isdigit()]
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.1)

    def close(self) -> None:
        """Kill what still runs inside, remove the namespaces (their veth ends go with them, and
        the other ends with those) and the bridge."""
        for ns in self._made:
            self._kill_inside(ns)
            _ip("netns", "del", ns, check=False)
        self._made.clear()
        if self._bridge_made:
            _ip("link", "del", self.bridge, check=False)
            self._bridge_made = False
