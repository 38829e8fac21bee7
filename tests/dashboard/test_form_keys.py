"""Every dashboard form that posts a command carries the page's form key, so a double click replays the first
answer instead of doing the work twice; a form without one names here why a second submit is harmless."""

from __future__ import annotations

import re
from pathlib import Path

TEMPLATES = Path(__file__).parents[2] / "control_plane" / "dashboard" / "templates" / "dashboard"
_MACRO = re.compile(r"{%-?\s*macro\s+(\w+)\(.*?%}(.*?){%-?\s*endmacro", re.S)
_FORM = re.compile(r"<form\b([^>]*)>(.*?)</form>", re.S)
_ACTION = re.compile(r'action="([^"]*)"')

# (template, the end of the form's action): why a second submit of the same page changes nothing more.
UNKEYED = {
    ("base.html", "'logout'"): "signing out twice leaves the browser signed out",
    ("login.html", "'login'"): "signing in writes no command",
    ("fields.html", "'fields', 'confirm'"): "it only shows the confirmation page, whose form carries the key",
    ("lane_pack.html", "'pack'"): "it names the version it edits: a second submit is a version_conflict, not a version",
    ("lanes.html", "'approval'"): "it sets the lane's approval rule to a value",
    ("lanes.html", "'budget'"): "it sets the lane's budget to a value",
    ("lanes.html", "'enabled'"): "it sets the lane on or off",
    ("media.html", "'delete'"): "trash and restore set the file's state",
    ("media_item.html", "'delete'"): "trash and restore set the file's state",
    ("member_confirm.html", "'remove'"): "a removed member stays removed",
    ("member_confirm.html", "'revoke'"): "revoking again keeps the first revocation",
    ("ops_key_confirm.html", "'revoke'"): "revoking again keeps the first revocation",
    ("ops_keys.html", "'expire'"): "it sets the key's expiry to a value",
    ("ops_keys.html", "'keys'"): "adding a trusted key again renews the same key",
    ("ops_tenants.html", "'quota'"): "it sets the tenant's quota to values",
    ("ops_tenants.html", "'suspend'"): "suspend and resume set the tenant's state",
    ("ops_tenants.html", "'tenants'"): "a tenant's slug is unique: a second create is refused, already_exists",
    ("packages.html", "'expire'"): "it sets the key's expiry to a value",
    ("packages.html", "'revoke'"): "revoking again keeps the first revocation",
    ("packages.html", "'keys'"): "adding a trusted key again renews the same key",
    ("site.html", "'enable'"): "enable and disable set the endpoint's state",
}


def _posting_forms() -> list[tuple[str, str, bool]]:
    found = []
    for template in sorted(TEMPLATES.glob("*.html")):
        text = template.read_text()
        keyed_macros = {name for name, body in _MACRO.findall(text) if 'name="form_key"' in body}
        for attributes, body in _FORM.findall(text):
            if 'method="post"' not in attributes.lower():
                continue
            action = _ACTION.search(attributes)
            keyed = 'name="form_key"' in body or any(f"{name}()" in body for name in keyed_macros)
            found.append((template.name, action.group(1) if action else "", keyed))
    return found


def _entry(template: str, action: str) -> tuple[str, str] | None:
    """The UNKEYED entry of ``template``'s form whose ``url(...)`` ends with the entry's ending."""
    target = action.removesuffix("}}").strip().removesuffix(")")
    return next((entry for entry in UNKEYED if entry[0] == template and target.endswith(entry[1])), None)


def test_every_form_that_posts_a_command_carries_the_form_key_or_says_why_it_needs_none() -> None:
    forms = _posting_forms()
    assert len(forms) > 50  # the templates were found and read
    missing = [(template, action) for template, action, keyed in forms if not keyed and not _entry(template, action)]
    assert missing == [], "a posting form without form_key and without a reason in UNKEYED"


def test_every_reason_still_names_a_form_without_a_key() -> None:
    unkeyed = [(template, action) for template, action, keyed in _posting_forms() if not keyed]
    named = {_entry(template, action) for template, action in unkeyed}
    assert [entry for entry in UNKEYED if entry not in named] == []
