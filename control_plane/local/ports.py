"""Is a TCP port free, and if not, who holds it.

``pressroom up`` checks every port it will listen on before it starts anything:
a second stack (or any other server) on 8000 would otherwise answer our health
checks and fail later with an unrelated error.
"""

from __future__ import annotations

import os
import random
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

from control_plane.local.errors import PortTaken

__all__ = [
    "PortHolder",
    "PortWanted",
    "check_ports_free",
    "ephemeral_port_range",
    "free_port",
    "port_holder",
    "port_is_free",
]


# Linux's default when /proc does not say: outgoing connections take their source port from here.
_DEFAULT_EPHEMERAL = (32768, 60999)
# Below this, ports are more often some system service's.
_LOWEST_CHOSEN = 10000
_handed_out: set[int] = set()


def ephemeral_port_range() -> tuple[int, int]:
    """The ports the kernel gives outgoing connections (and ``bind(port 0)``), inclusive."""
    try:
        low, high = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        return _DEFAULT_EPHEMERAL
    return low, high


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that is free now and that no outgoing connection will take.

    A port the kernel hands out for ``bind(port 0)`` comes from the ephemeral
    range, where every outgoing connection also takes its source port: between
    choosing it and a child server binding it, a connection to PostgreSQL or the
    Prefect server may hold it. So the port is drawn at random from outside that
    range, and never twice in one process.
    """
    low, high = ephemeral_port_range()
    candidates = [port for port in (*range(_LOWEST_CHOSEN, low), *range(high + 1, 65536)) if port not in _handed_out]
    random.shuffle(candidates)
    for port in candidates[:200]:
        if port_is_free("127.0.0.1", port):
            _handed_out.add(port)
            return port
    # The whole space is ephemeral (or taken): the kernel's choice is the best left.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_free(host: str, port: int) -> bool:
    """True if a server could bind ``host:port`` now."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        # As the servers do: connections of a server that just stopped (TIME_WAIT) do not count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class PortHolder:
    """The process listening on a port, as far as we may see it."""

    pid: int | None
    command: str

    def describe(self) -> str:
        if self.pid is None:
            return "a process this user may not see (run as its owner or as root to name it)"
        return f"pid {self.pid}: {self.command}"


def port_holder(port: int) -> PortHolder | None:
    """The process that listens on ``port`` (any address), or ``None`` if none is visible."""
    try:
        connections = psutil.net_connections(kind="tcp")
    except psutil.AccessDenied:
        return PortHolder(None, "")
    for conn in connections:
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
            return PortHolder(conn.pid, _command(conn.pid))
    return None


def _command(pid: int | None) -> str:
    if pid is None:
        return ""
    try:
        argv = psutil.Process(pid).cmdline()
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return "?"
    if not argv:
        return "?"
    # The interpreter's full path says little; its name and the arguments say what runs.
    return " ".join([os.path.basename(argv[0]), *argv[1:]])


@dataclass(frozen=True)
class PortWanted:
    """A port the stack will listen on: what for, and the setting that moves it."""

    host: str
    port: int
    purpose: str
    setting: str


def check_ports_free(wanted: Sequence[PortWanted]) -> None:
    """Raise ``PortTaken`` naming every wanted port that is taken and what holds it."""
    problems = []
    for want in wanted:
        if port_is_free(want.host, want.port):
            continue
        holder = port_holder(want.port)
        by = holder.describe() if holder is not None else "a process that is not listening (try again shortly)"
        problems.append(f"port {want.port} ({want.purpose}) is taken by {by} — stop it or set {want.setting}")
    if problems:
        raise PortTaken("\n".join(problems))
