"""Moving a site to another tenant: every value that names the source tenant names the new one instead.

What names a tenant in a workspace, and nothing else, is rewritten (a word in
a document's body that happens to equal the slug is left alone):

- a value that is the slug itself (``"tenant": "acme"`` in a run's parameters or a public record);
- the site's public address (``http://host/acme``, ``…/acme/about``);
- API paths (``/api/tenants/acme/…``, ``/api/public/acme/…``) and store keys (``tenants/acme/…``);
- surrogate keys (``acme:doc:about``) and run tags (``tenant:acme``).

JSON columns are rewritten in their text, so a value inside a JSON object is
found by the same rules (a JSON string ``"acme"`` is the slug itself).
"""

from __future__ import annotations

import re
from typing import Any


class TenantRewrite:
    """Rewrites values of tenant ``source`` (site address ``source_url``) into tenant ``target`` (``target_url``)."""

    def __init__(self, source: str, target: str, *, source_url: str, target_url: str) -> None:
        self.source, self.target = source, target
        s, end = re.escape(source), r"(?![a-z0-9-])"
        self._replacements = (
            (re.compile(re.escape(source_url.rstrip("/")) + r"(?=[/\"?#]|$)"), target_url.rstrip("/")),
            (re.compile(rf"/api/(tenants|public)/{s}{end}"), rf"/api/\1/{target}"),
            (re.compile(rf"(?<![a-z0-9-])tenants/{s}/"), f"tenants/{target}/"),
            (re.compile(rf"(^|\")({s}):"), rf"\g<1>{target}:"),
            (re.compile(rf"(?<![a-z0-9-])tenant:{s}{end}"), f"tenant:{target}"),
            (re.compile(rf"\"{s}\""), f'"{target}"'),
        )

    def text(self, value: str) -> str:
        if value == self.source:
            return self.target
        if self.source not in value:
            return value
        for pattern, replacement in self._replacements:
            value = pattern.sub(replacement, value)
        return value

    def value(self, value: Any) -> Any:
        return self.text(value) if isinstance(value, str) else value

    def row(self, row: dict[str, Any]) -> dict[str, Any]:
        return {column: self.value(value) for column, value in row.items()}


__all__ = ["TenantRewrite"]
