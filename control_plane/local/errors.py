"""Why the local stack could not start or keep running.

Every error carries a stable ``code``; ``pressroom up`` prints the message and
exits non-zero. Nothing here is an HTTP error: the local stack has no API.

    LocalServerError          launch_failed: a process died or never became ready
    ├── DataDirUnreachable    data_dir_unreachable: the PostgreSQL OS user cannot reach the
    │                         data directory or the binaries, and cannot be given the right to
    ├── PortTaken             port_taken: a port the stack needs is held by another process
    └── CrashLoop             crash_loop: a supervised child keeps crashing; restarting won't help
"""

from __future__ import annotations


class LocalServerError(RuntimeError):
    """A local PostgreSQL, Prefect server or stack child could not be started or reached."""

    code = "launch_failed"


class DataDirUnreachable(LocalServerError):
    """The unprivileged PostgreSQL user cannot reach the data directory or the binaries."""

    code = "data_dir_unreachable"


class PortTaken(LocalServerError):
    """A port the stack must listen on is already taken; the message names each port and holder."""

    code = "port_taken"


class CrashLoop(LocalServerError):
    """A supervised child crashed too often in too short a time; ``log_tail`` is its last output."""

    code = "crash_loop"

    def __init__(self, child: str, message: str, log_tail: str) -> None:
        super().__init__(message)
        self.child = child
        self.log_tail = log_tail
