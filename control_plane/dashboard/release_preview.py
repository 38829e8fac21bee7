"""What a release would change, entity by entity, before anyone confirms it: before → after.

Documents compare their public version with the version picked (title, address, a line
diff of the body); navigation and redirects compare their published content with the
picked draft version; the theme compares the pinned theme with the chosen one.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from control_plane.auth import Principal
from control_plane.container import Services
from tenant_runtime.errors import NotFound

MAX_DIFF_LINES = 400


@dataclass
class Change:
    """One entity of the release: what it is now on the public site and what it becomes."""

    kind: str  # document | navigation | redirects | theme
    label: str
    fields: list[tuple[str, str, str]] = field(default_factory=list)  # (name, before, after) that differ
    diff: list[tuple[str, str]] = field(default_factory=list)  # (" " | "+" | "-", line) of the body
    warning: str | None = None
    new: bool = False  # not public at all before


@dataclass
class Picked:
    """What the form picked: document versions, resource versions and the theme."""

    documents: list[tuple[str, int]] = field(default_factory=list)
    navigation_version: int | None = None
    redirects_version: int | None = None
    theme: str | None = None

    @property
    def empty(self) -> bool:
        return (
            not self.documents and self.navigation_version is None and self.redirects_version is None and not self.theme
        )


def body_diff(before: str, after: str) -> list[tuple[str, str]]:
    """A line diff with three lines of context, marked for the template; capped at MAX_DIFF_LINES."""
    lines: list[tuple[str, str]] = []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        mark = line[:1] if line[:1] in "+- @" else " "
        lines.append((mark, line[1:] if mark in "+- " else line))
        if len(lines) >= MAX_DIFF_LINES:
            lines.append(("@", "… (diff cut)"))
            break
    return lines


def _items(name: str, content: Any) -> list[str]:
    if not isinstance(content, list):
        return []
    if name == "navigation":
        return [f"{i.get('label')} → {i.get('href')}" for i in content if isinstance(i, dict)]
    return [f"{i.get('from')} → {i.get('to')} ({i.get('status', 301)})" for i in content if isinstance(i, dict)]


def preview(services: Services, principal: Principal, tenant: str, picked: Picked) -> list[Change]:
    """Every change the release makes, in the order of the form."""
    changes: list[Change] = []
    site_url = f"{services.settings.runtime.site_url}/{tenant}"
    for document_id, version in picked.documents:
        try:
            doc = services.documents.get(principal, tenant, document_id)
            after = services.revisions.get(principal, tenant, document_id, version)
        except NotFound:
            changes.append(Change("document", document_id, warning="This document or version no longer exists."))
            continue
        change = Change("document", doc.title)
        if doc.version != version:
            change.warning = (
                f"Version {doc.version} was saved after you picked version {version}: "
                "confirming is refused as a version conflict. Pick the document again."
            )
        before = None
        if doc.status == "published" and doc.published_version is not None:
            before = services.revisions.get(principal, tenant, document_id, doc.published_version)
        change.new = before is None
        pairs = [
            ("version", str(before.version) if before else "not public", str(version)),
            ("title", before.title if before else "—", after.title),
            ("address", f"{site_url}/{before.slug}" if before else "—", f"{site_url}/{after.slug}"),
            ("kind", before.kind if before else "—", after.kind),
        ]
        change.fields = [(name, b, a) for name, b, a in pairs if b != a]
        change.diff = body_diff(before.body or "" if before else "", after.body or "")
        changes.append(change)
    for name, wanted in (("navigation", picked.navigation_version), ("redirects", picked.redirects_version)):
        if wanted is None:
            continue
        version = wanted
        resource = services.site.resource(principal, tenant, name)
        change = Change(name, name.capitalize())
        if resource.version != version:
            change.warning = f"Version {resource.version} was saved after you picked version {version}."
        before_items = _items(name, resource.published_content)
        after_items = _items(name, resource.content) if resource.version == version else []
        change.fields = [("version", str(resource.published_version or "none"), str(version))]
        change.diff = body_diff("\n".join(before_items), "\n".join(after_items)) or [(" ", "(no change in items)")]
        changes.append(change)
    if picked.theme:
        theme = services.site.resource(principal, tenant, "theme")
        current = (theme.published_content or {}).get("name", "default") if theme.published_content else "default"
        changes.append(Change("theme", "Theme", fields=[("theme", current, picked.theme)]))
    return changes


__all__ = ["Change", "Picked", "body_diff", "preview"]
