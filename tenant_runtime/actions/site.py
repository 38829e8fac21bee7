"""Site-level actions: the site's settings and its example content."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlmodel import Session

from tenant_runtime import audit
from tenant_runtime.actions.operations import new_operation, new_operation_id
from tenant_runtime.errors import BadRequest
from tenant_runtime.ids import utcnow
from tenant_runtime.workflows import SeedExampleSiteParameters
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import Operation, SiteState

MAX_TITLE = 200
MAX_DESCRIPTION = 500
# A BCP 47 language tag as pages (``<html lang>``) and feeds carry it: a 2-3 letter language, then subtags.
LANGUAGE_TAG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
SETTINGS = ("title", "description", "language", "timezone")


def request_seed(tx: Session, tenant: str, actor: Actor) -> Operation:
    """Queue the seed_example_site flow for this tenant."""
    actor.require("site.admin")
    operation = new_operation(tx, actor, SeedExampleSiteParameters(tenant=tenant, operation_id=new_operation_id()))
    audit.record(tx, "site.seed", actor, "site", tenant, operation_id=operation.id)
    return operation


def checked_settings(
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    timezone: str | None = None,
) -> dict[str, str]:
    """The given settings, normalized; a 400 naming the first one that is not valid."""
    wanted: dict[str, str] = {}
    if title is not None:
        if not title.strip():
            raise BadRequest("The title cannot be empty.", details={"field": "title"}, code="invalid_title")
        wanted["title"] = title.strip()[:MAX_TITLE]
    if description is not None:
        if len(description) > MAX_DESCRIPTION:
            raise BadRequest(
                f"The description is at most {MAX_DESCRIPTION} characters.",
                details={"field": "description", "max": MAX_DESCRIPTION},
                code="invalid_description",
            )
        wanted["description"] = " ".join(description.split())
    if language is not None:
        if not LANGUAGE_TAG.match(language) or len(language) > 35:
            raise BadRequest(
                "The language is a BCP 47 tag such as en, fr or pt-BR.",
                details={"field": "language", "language": language},
                code="invalid_language",
            )
        wanted["language"] = language
    if timezone is not None:
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError):
            raise BadRequest("Unknown timezone.", details={"timezone": timezone}, code="invalid_timezone") from None
        wanted["timezone"] = timezone
    return wanted


def configure_site(
    tx: Session,
    actor: Actor,
    *,
    title: str | None = None,
    description: str | None = None,
    language: str | None = None,
    timezone: str | None = None,
) -> tuple[SiteState, list[str]]:
    """Set the site's title, description, language and timezone (an IANA name); the state and what changed.

    A change bumps the settings version (every stored page shows the old settings from then on, so the
    public server renders pages live until they are delivered again) and the generation (home and feeds).
    """
    actor.require("site.admin")
    wanted = checked_settings(title=title, description=description, language=language, timezone=timezone)
    existing = tx.get(SiteState, 1)
    state = existing or SiteState()
    changed = [name for name in SETTINGS if name in wanted and getattr(state, name) != wanted[name]]
    for name in changed:
        setattr(state, name, wanted[name])
    if changed or existing is None:
        state.settings_version += 1
        state.generation += 1
        state.updated_at = utcnow()
        tx.add(state)
    now = {name: getattr(state, name) for name in SETTINGS}
    audit.record(tx, "site.configure", actor, "site", "site", changed=changed, **now)
    return state, changed
