"""Navigation, redirects and the theme pin: versioned site-wide resources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session, select

from tenant_runtime import audit
from tenant_runtime.errors import BadRequest, NotFound, VersionConflict
from tenant_runtime.ids import utcnow
from tenant_runtime.packages.themes import installed_themes
from tenant_runtime.workspace.access import Actor
from tenant_runtime.workspace.models import SiteResource, SiteResourceRevision

RESOURCES = ("navigation", "redirects", "theme")
THEMES = ("default",)
MAX_ITEMS = 200


def _check_href(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 500:
        raise BadRequest(f"{field} must be a path or an http(s) URL.", details={"field": field})
    if value.startswith("/"):
        if value.startswith("//") or "\\" in value:
            raise BadRequest(f"{field} must be a path or an http(s) URL.", details={"field": field})
        return value
    if urlsplit(value).scheme not in ("http", "https"):
        raise BadRequest(f"{field} must be a path or an http(s) URL.", details={"field": field})
    return value


def validate_content(name: str, content: Any, *, themes: Sequence[str] = THEMES) -> Any:
    """Check a resource's content shape; returns the normalized content. ``themes``: the installed themes."""
    if name == "theme":
        if not isinstance(content, dict) or content.get("name") not in themes:
            raise BadRequest(
                'theme is {"name": <installed theme>}.', details={"allowed": list(themes)}, code="theme_not_found"
            )
        return {"name": content["name"]}
    if not isinstance(content, list) or len(content) > MAX_ITEMS:
        raise BadRequest(f"{name} is a list of at most {MAX_ITEMS} items.", details={"resource": name})
    items = []
    for index, item in enumerate(content):
        if not isinstance(item, dict):
            raise BadRequest(f"{name}[{index}] must be an object.", details={"resource": name})
        if name == "navigation":
            label = item.get("label")
            if not isinstance(label, str) or not label.strip() or len(label) > 100:
                raise BadRequest(f"navigation[{index}].label is 1-100 characters.", details={"index": index})
            items.append({"label": label.strip(), "href": _check_href(item.get("href"), f"navigation[{index}].href")})
        else:
            source = item.get("from")
            if not isinstance(source, str) or not source.startswith("/") or source.startswith("//"):
                raise BadRequest(f"redirects[{index}].from must be a path.", details={"index": index})
            status = item.get("status", 301)
            if status not in (301, 302, 307, 308):
                raise BadRequest(f"redirects[{index}].status is 301, 302, 307 or 308.", details={"index": index})
            items.append(
                {"from": source, "to": _check_href(item.get("to"), f"redirects[{index}].to"), "status": status}
            )
    return items


def get_resource(tx: Session, name: str) -> SiteResource:
    if name not in RESOURCES:
        raise NotFound("No such site resource.", details={"resource": name, "allowed": list(RESOURCES)})
    return tx.get(SiteResource, name) or SiteResource(name=name)


def resource_content(tx: Session, name: str, version: int | None) -> Any:
    if not version:
        return None
    revision = tx.exec(
        select(SiteResourceRevision).where(SiteResourceRevision.name == name, SiteResourceRevision.version == version)
    ).first()
    return revision.content if revision is not None else None


def update_resource(tx: Session, actor: Actor, name: str, content: Any, *, expected_version: int) -> SiteResource:
    """Save a new draft version of a site resource (optimistic on ``expected_version``)."""
    actor.require("content.edit")
    resource = get_resource(tx, name)
    if resource.version != expected_version:
        raise VersionConflict(
            f"The {name} changed since you loaded it.",
            details={"expected_version": expected_version, "current_version": resource.version},
        )
    content = validate_content(name, content, themes=installed_themes(tx))
    resource.version += 1
    resource.updated_at = utcnow()
    tx.add(resource)
    tx.flush()
    tx.add(SiteResourceRevision(name=name, version=resource.version, content=content, actor=actor.id))
    audit.record(tx, f"site.{name}.edit", actor, "site_resource", name, version=resource.version)
    return resource


def publish_theme_pin(tx: Session, actor_id: str, theme: str) -> int:
    """Pin ``theme`` as a new published version of the theme resource (as a release does); the version."""
    resource = get_resource(tx, "theme")
    resource.version += 1
    resource.published_version = resource.version
    resource.updated_at = utcnow()
    tx.add(resource)
    tx.flush()
    tx.add(SiteResourceRevision(name="theme", version=resource.version, content={"name": theme}, actor=actor_id))
    return resource.version
