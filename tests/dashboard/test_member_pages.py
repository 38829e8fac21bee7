"""Members and tokens in the dashboard: invite with the token shown once, role changes, removal and
revocation behind a confirmation, the last-owner guard in words, the audit page by action; and only
owners see or reach any of it."""

from __future__ import annotations

import re

import pytest

from control_plane.dashboard import member_pages
from tests.dashboard.conftest import Dashboard
from tests.dashboard.test_dashboard import _flash

_SECRET = re.compile(r'<p class="secret">(prt_[^<]+)</p>')


def _members(dashboard: Dashboard, tenant: str) -> dict[str, str]:
    owner = dashboard.services.tokens.resolve_id(_first_owner_token(dashboard, tenant))
    assert owner is not None
    return {m.name: m.role for m in dashboard.services.members.members(owner, tenant)}


def _first_owner_token(dashboard: Dashboard, tenant: str) -> str:
    from sqlmodel import Session, col, select

    from control_plane.db.models import ApiToken, Membership

    with Session(dashboard.services.engine) as session:
        row = session.exec(
            select(ApiToken)
            .join(Membership, col(Membership.user_id) == col(ApiToken.user_id))
            .where(Membership.role == "owner", col(ApiToken.revoked_at).is_(None))
            .order_by(col(ApiToken.created_at))
        ).first()
        assert row is not None
        return row.id


def test_an_owner_invites_a_member_who_signs_in_with_the_token_shown_once(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    page = browser.get("/dashboard/sites/acme/members")
    assert page.status_code == 200 and "Invite a member" in page.text

    bad = browser.post(
        "/dashboard/sites/acme/members", {"name": " ", "email": "nope", "role": "editor", "form_key": browser.form_key}
    )
    assert bad.status_code == 400 and 'id="name-error"' in bad.text and 'id="email-error"' in bad.text
    assert 'value="nope"' in bad.text  # what was typed stays

    invited = browser.post(
        "/dashboard/sites/acme/members",
        {"name": "Eddie", "email": "eddie@example.com", "role": "editor", "form_key": browser.form_key},
    )
    assert invited.status_code == 201, invited.text
    secret = _SECRET.search(invited.text)
    assert secret is not None and "shown <strong>only this once</strong>" in invited.text
    # A resubmitted form replays: no second member, and the secret is not shown again.
    again = browser.post(
        "/dashboard/sites/acme/members",
        {"name": "Eddie", "email": "eddie@example.com", "role": "editor", "form_key": browser.form_key},
    )
    assert again.status_code == 201 and _SECRET.search(again.text) is None and "already sent" in again.text
    assert list(_members(dashboard, "acme").values()).count("editor") == 1

    eddie = dashboard.browser(secret.group(1))
    home = eddie.get("/dashboard/sites/acme/")
    assert home.status_code == 200 and "/dashboard/sites/acme/members" not in home.text  # no link for an editor
    refused = eddie.get("/dashboard/sites/acme/members")
    assert refused.status_code == 403 and "forbidden" in refused.text
    assert eddie.get("/dashboard/sites/acme/audit").status_code == 403
    # The server refuses what the page does not offer.
    forged = eddie.post("/dashboard/sites/acme/members", {"name": "Mallory", "role": "owner"})
    assert forged.status_code == 403
    assert "Mallory" not in _members(dashboard, "acme")


def test_roles_change_and_the_last_owner_is_kept_with_the_reason_on_the_page(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    page = browser.get("/dashboard/sites/acme/members")
    me = re.search(r'id="member-(usr_\w+)">\s*<td>[^<]*<span class="muted">\(you\)', page.text)
    assert me is not None
    demote = browser.post(
        f"/dashboard/sites/acme/members/{me.group(1)}/role", {"role": "viewer", "form_key": browser.form_key}
    )
    assert "last owner" in _flash(demote.text) and "last_owner" in demote.text
    assert "owner" in _members(dashboard, "acme").values()

    browser.post("/dashboard/sites/acme/members", {"name": "Vera", "role": "viewer", "form_key": browser.form_key})
    page = browser.get("/dashboard/sites/acme/members")
    vera = re.search(r'id="member-(usr_\w+)">\s*<td>Vera', page.text)
    assert vera is not None
    promoted = browser.post(
        f"/dashboard/sites/acme/members/{vera.group(1)}/role", {"role": "editor", "form_key": browser.form_key}
    )
    assert "Vera is now editor" in _flash(promoted.text)
    assert _members(dashboard, "acme")["Vera"] == "editor"


def test_removing_a_member_and_revoking_a_token_need_the_box_ticked(dashboard: Dashboard) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/members")
    invited = browser.post(
        "/dashboard/sites/acme/members", {"name": "Tess", "role": "editor", "form_key": browser.form_key}
    )
    tess_secret = _SECRET.search(invited.text)
    assert tess_secret is not None
    tess = dashboard.browser(tess_secret.group(1))
    member_id = re.search(r'id="member-(usr_\w+)">\s*<td>Tess', invited.text)
    assert member_id is not None

    created = browser.post(
        "/dashboard/sites/acme/tokens", {"member_id": member_id.group(1), "label": "CI", "form_key": browser.form_key}
    )
    assert created.status_code == 201 and _SECRET.search(created.text) is not None
    token_id = re.search(r'id="token-(tok_\w+)">\s*<td>CI', created.text)
    assert token_id is not None

    confirm = browser.get(f"/dashboard/sites/acme/tokens/{token_id.group(1)}/revoke")
    assert confirm.status_code == 200 and "answer 401 from now on" in confirm.text
    unticked = browser.post(f"/dashboard/sites/acme/tokens/{token_id.group(1)}/revoke", {})
    assert unticked.status_code == 400 and "Tick the box" in unticked.text
    revoked = browser.post(f"/dashboard/sites/acme/tokens/{token_id.group(1)}/revoke", {"confirm": "yes"})
    assert "is revoked" in _flash(revoked.text) and f'id="token-{token_id.group(1)}"' not in revoked.text

    confirm = browser.get(f"/dashboard/sites/acme/members/{member_id.group(1)}/remove")
    assert confirm.status_code == 200 and "Remove Tess?" in confirm.text
    assert browser.post(f"/dashboard/sites/acme/members/{member_id.group(1)}/remove", {}).status_code == 400
    removed = browser.post(f"/dashboard/sites/acme/members/{member_id.group(1)}/remove", {"confirm": "yes"})
    assert "Tess is no longer a member; 1 token(s) revoked" in _flash(removed.text)
    assert "Tess" not in _members(dashboard, "acme")
    # Tess's own session ends with her membership.
    assert tess.get("/dashboard/sites/acme/", follow_redirects=False).status_code == 303


def test_the_audit_page_lists_who_did_what_newest_first_and_filters_by_action(
    dashboard: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = dashboard.browser(dashboard.tenant("acme"))
    browser.get("/dashboard/sites/acme/members")
    browser.post("/dashboard/sites/acme/members", {"name": "Ann", "role": "viewer", "form_key": browser.form_key})
    page = browser.get("/dashboard/sites/acme/audit")
    assert page.status_code == 200
    actions = re.findall(r"<td><code>([a-z_.]+)</code></td>", page.text)
    assert actions[0] == "member.invite" and "token.issue" in actions and "tenant.create" in actions, actions
    assert '<option value="member.invite"' in page.text

    filtered = browser.get("/dashboard/sites/acme/audit?action=token.issue")
    assert set(re.findall(r"<td><code>([a-z_.]+)</code></td>", filtered.text)) == {"token.issue"}
    assert "an operator" in filtered.text
    fragment = browser.get("/dashboard/sites/acme/audit?action=member.invite", headers={"HX-Request": "true"})
    assert 'id="audit-rows"' in fragment.text
    assert browser.get("/dashboard/sites/acme/audit?action=Bad%20Action").status_code == 400

    # Older pages by cursor, two rows a page: every row once, newest first.
    monkeypatch.setattr(member_pages, "AUDIT_PAGE", 2)
    seen, link = [], "/dashboard/sites/acme/audit"
    while link:
        answer = browser.get(link)
        seen.extend(re.findall(r"<td><code>([a-z_.]+)</code></td>", answer.text))
        older = re.search(r'<a href="\?([^"]+)" rel="next">', answer.text)
        link = f"/dashboard/sites/acme/audit?{older.group(1).replace('&amp;', '&')}" if older else ""
    assert seen == actions
