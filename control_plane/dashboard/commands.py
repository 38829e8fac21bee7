"""The one shape of most dashboard form POSTs: run one command of an area service, say what happened,
redirect (Post/Redirect/Get).

A refusal of the command layer (permission, confirmation, conflict, another tenant's id)
becomes an error flash on the page the form came from, with its stable code; success
becomes a notice on the page ``then`` names (by default the same page).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from litestar import Request
from litestar.response import Redirect

from control_plane.dashboard.views import flash_error, notice, see_other
from tenant_runtime.errors import PressroomError

T = TypeVar("T")


def command_redirect(
    request: Request[Any, Any, Any],
    back: str,
    call: Callable[[], T],
    says: Callable[[T], str],
    *,
    then: Callable[[T], str] | None = None,
) -> Redirect:
    """Run ``call``; refused, flash why and go ``back``; done, flash ``says(outcome)`` and go to ``then(outcome)``
    (default ``back``)."""
    try:
        outcome = call()
    except PressroomError as exc:
        flash_error(request, exc)
        return see_other(back)
    notice(request, says(outcome))
    return see_other(then(outcome) if then is not None else back)


__all__ = ["command_redirect"]
