"""structlog set-up: JSON lines carrying request, tenant, operation and flow-run ids.

The ids come from structlog's context variables, bound where the work starts:
``request_id``, ``method``, ``path`` and ``tenant`` for an HTTP request
(``control_plane/http/request_log.py``); ``tenant``, ``operation_id`` and
``flow_run_id`` for a flow run a worker executes (``dispatch/worker.py``), so
every line its steps log carries them too (threads started with
``asyncio.to_thread`` copy the context).
"""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(level: str = "INFO", *, json: bool = True, stream: TextIO | None = None) -> None:
    """Route structlog to ``stream`` (stderr) as JSON lines (or console lines for humans)."""
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
