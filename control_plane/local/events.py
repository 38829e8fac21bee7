"""What the supervisor tells: a JSON line per event in a log file, a plain line on the console.

The logger is private to the supervisor (not structlog's global set-up in
``tenant_runtime.logs``), so its lines go to ``data/logs/supervisor.log`` and
never mix with whatever the process logs elsewhere.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import structlog

__all__ = ["EventLog", "stderr_line"]


def stderr_line(message: str) -> None:
    """Print one line to stderr; a closed terminal (after SIGHUP) must not break a stop."""
    with contextlib.suppress(OSError, ValueError):
        print(message, file=sys.stderr, flush=True)


class EventLog:
    """Supervisor events: JSON lines in ``path`` (if given) and a line for people on ``console``."""

    def __init__(self, path: Path | None, console: Callable[[str], None] = stderr_line) -> None:
        self._console = console
        self._file: IO[str] | None = None
        self._logger: Any = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", buffering=1, encoding="utf-8")  # noqa: SIM115 - closed in close()
            self._logger = structlog.wrap_logger(
                structlog.PrintLogger(self._file),
                processors=[
                    structlog.processors.add_log_level,
                    structlog.processors.TimeStamper(fmt="iso", utc=True),
                    structlog.processors.JSONRenderer(),
                ],
            )

    def emit(self, event: str, message: str, *, level: str = "info", **fields: object) -> None:
        """Record ``event`` with ``fields`` as a JSON line and show ``message`` on the console."""
        if self._logger is not None:
            with contextlib.suppress(OSError, ValueError):
                getattr(self._logger, level)(event, message=message, **fields)
        self._console(message)

    def say(self, message: str) -> None:
        """A progress line for people only."""
        self._console(message)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._logger = None
