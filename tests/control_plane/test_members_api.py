"""Members, tokens and the audit log over HTTP, without Prefect: site.admin only, the last-owner guards,
tokens shown once and revoked for good, and every change in the tenant's audit log."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from prometheus_client import REGISTRY
from sqlmodel import Session, select

from control_plane.app import create_app
from control_plane.container import Services
from control_plane.db.models import ApiToken, IdempotencyRecord
from dispatch.prefect_twin import RecordingPrefect
from tests.fixtures.http_errors import assert_error
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class Site:
    api: TestClient[Any]
    services: Services
    slug: str
    owner: dict[str, str]

    def token(self, role: str, slug: str | None = None) -> dict[str, str]:
        answer = self.api.post(f"/ops/tenants/{slug or self.slug}/tokens", json={"role": role}, headers=OPERATOR)
        assert answer.status_code == 201, answer.text
        return bearer(answer.json()["token"])

    def members(self) -> list[dict[str, Any]]:
        answer = self.api.get(f"/api/tenants/{self.slug}/members", headers=self.owner)
        assert answer.status_code == 200, answer.text
        return list(answer.json())

    def me(self, headers: dict[str, str]) -> str:
        user_id = self.services.tokens.resolve(headers["Authorization"]).user_id
        assert user_id is not None
        return user_id

    def audit(self, **query: Any) -> list[dict[str, Any]]:
        answer = self.api.get(f"/api/tenants/{self.slug}/audit", params=query, headers=self.owner)
        assert answer.status_code == 200, answer.text
        return list(answer.json())

    def invite(self, name: str, role: str, **extra: Any) -> dict[str, Any]:
        answer = self.api.post(
            f"/api/tenants/{self.slug}/members", json={"name": name, "role": role, **extra}, headers=self.owner
        )
        assert answer.status_code == 201, answer.text
        return dict(answer.json())


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    settings = make_settings(tmp_path / "data")
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as api:
        for slug in ("acme", "other"):
            created = api.post("/ops/tenants", json={"slug": slug, "name": slug.title()}, headers=OPERATOR)
            assert created.status_code == 201, created.text
        owner = api.post("/ops/tenants/acme/tokens", json={"role": "owner", "name": "Olga"}, headers=OPERATOR)
        yield Site(api, services, "acme", bearer(owner.json()["token"]))


def test_an_invited_member_signs_in_with_the_token_shown_once_and_gets_their_role(site: Site) -> None:
    invited = site.invite("Eddie Editor", "editor", email="Eddie@Example.com")
    member, token = invited["member"], invited["token"]
    assert member["role"] == "editor" and member["email"] == "eddie@example.com" and member["active_tokens"] == 1
    assert token["token"].startswith("prt_") and token["member_id"] == member["id"]
    # Only its hash is stored.
    with Session(site.services.engine) as session:
        row = session.get(ApiToken, token["id"])
        assert row is not None and token["token"] not in row.token_hash and len(row.token_hash) == 64
    editor = bearer(token["token"])
    assert site.api.get("/api/tenants/acme/documents", headers=editor).status_code == 200
    made = site.api.post("/api/tenants/acme/documents", json={"slug": "by-eddie", "title": "E"}, headers=editor)
    assert made.status_code == 201, made.text
    # The list shows the member; the token list never shows a secret.
    assert {m["name"]: m["role"] for m in site.members()} == {"Olga": "owner", "Eddie Editor": "editor"}
    listed = site.api.get("/api/tenants/acme/tokens", headers=site.owner).json()
    assert {t["member_name"] for t in listed} == {"Olga", "Eddie Editor"}
    assert all("token" not in t and "token_hash" not in t for t in listed)
    assert_error(
        site.api.post(
            "/api/tenants/acme/members",
            json={"name": "Again", "role": "viewer", "email": "eddie@example.com"},
            headers=site.owner,
        ),
        409,
        "member_exists",
    )


def test_editors_and_viewers_get_403_from_every_members_tokens_and_audit_endpoint(site: Site) -> None:
    target = site.invite("Vera", "viewer")["member"]["id"]
    token_id = site.api.get("/api/tenants/acme/tokens", headers=site.owner).json()[0]["id"]
    calls = [
        ("GET", "/api/tenants/acme/members", None),
        ("POST", "/api/tenants/acme/members", {"name": "Mallory", "role": "owner"}),
        ("PATCH", f"/api/tenants/acme/members/{target}", {"role": "owner"}),
        ("DELETE", f"/api/tenants/acme/members/{target}", {"confirm": True}),
        ("GET", "/api/tenants/acme/tokens", None),
        ("POST", "/api/tenants/acme/tokens", {"label": "mine"}),
        ("POST", f"/api/tenants/acme/tokens/{token_id}/revoke", {"confirm": True}),
        ("GET", "/api/tenants/acme/audit", None),
    ]
    tokens = {role: site.token(role) for role in ("editor", "viewer")}
    before = site.members()
    for role, headers in tokens.items():
        for method, path, body in calls:
            error = assert_error(
                site.api.request(method, path, json=body, headers=headers), 403, "forbidden", f"{role} {method} {path}"
            )
            assert error["details"] == {"permission": "site.admin", "role": role}
    assert site.members() == before
    assert [e["action"] for e in site.audit() if e["action"].startswith("member.")] == ["member.invite"]


def test_another_tenants_owner_gets_404_for_this_tenants_members_and_tokens(site: Site) -> None:
    member = site.invite("Vera", "viewer")["member"]["id"]
    token_id = next(
        t["id"] for t in site.api.get("/api/tenants/acme/tokens", headers=site.owner).json() if t["member_id"] == member
    )
    intruder = site.token("owner", "other")
    for method, path, body in [
        ("GET", "/api/tenants/acme/members", None),
        ("POST", "/api/tenants/acme/members", {"name": "Mallory", "role": "owner"}),
        ("PATCH", f"/api/tenants/acme/members/{member}", {"role": "owner"}),
        ("DELETE", f"/api/tenants/acme/members/{member}", {"confirm": True}),
        ("GET", "/api/tenants/acme/tokens", None),
        ("POST", "/api/tenants/acme/tokens", {"member_id": member}),
        ("POST", f"/api/tenants/acme/tokens/{token_id}/revoke", {"confirm": True}),
        ("GET", "/api/tenants/acme/audit", None),
        # Its own tenant's paths with acme's ids: not found either.
        ("PATCH", f"/api/tenants/other/members/{member}", {"role": "owner"}),
        ("DELETE", f"/api/tenants/other/members/{member}", {"confirm": True}),
        ("POST", "/api/tenants/other/tokens", {"member_id": member}),
        ("POST", f"/api/tenants/other/tokens/{token_id}/revoke", {"confirm": True}),
    ]:
        assert_error(site.api.request(method, path, json=body, headers=intruder), 404, "not_found", f"{method} {path}")
    assert {m["id"]: m["role"] for m in site.members()}[member] == "viewer"
    assert site.api.get("/api/tenants/acme/tokens", headers=site.owner).json()[0]["revoked_at"] is None


def test_the_last_owner_can_be_neither_demoted_nor_removed_nor_left_without_a_token(site: Site) -> None:
    olga = site.me(site.owner)
    assert_error(
        site.api.patch(f"/api/tenants/acme/members/{olga}", json={"role": "editor"}, headers=site.owner),
        409,
        "last_owner",
    )
    assert_error(
        site.api.request("DELETE", f"/api/tenants/acme/members/{olga}", json={"confirm": True}, headers=site.owner),
        409,
        "last_owner",
    )
    own_token = site.services.tokens.resolve(site.owner["Authorization"]).token_id
    assert_error(
        site.api.post(f"/api/tenants/acme/tokens/{own_token}/revoke", json={"confirm": True}, headers=site.owner),
        409,
        "last_owner_token",
    )
    assert [m["role"] for m in site.members() if m["id"] == olga] == ["owner"]

    # With a second owner, the first may step down; then the second is the last.
    second = site.invite("Sam", "owner")
    sam = bearer(second["token"]["token"])
    demoted = site.api.patch(f"/api/tenants/acme/members/{olga}", json={"role": "viewer"}, headers=sam)
    assert demoted.status_code == 200 and demoted.json()["role"] == "viewer", demoted.text
    # Olga's token follows her role at once.
    assert_error(site.api.get("/api/tenants/acme/members", headers=site.owner), 403, "forbidden")
    assert_error(
        site.api.request(
            "DELETE", f"/api/tenants/acme/members/{second['member']['id']}", json={"confirm": True}, headers=sam
        ),
        409,
        "last_owner",
    )


def test_a_removed_member_and_a_revoked_token_answer_401_and_removal_needs_confirmation(site: Site) -> None:
    invited = site.invite("Eddie", "editor")
    eddie, member_id = bearer(invited["token"]["token"]), invited["member"]["id"]
    extra = site.api.post("/api/tenants/acme/tokens", json={"member_id": member_id, "label": "ci"}, headers=site.owner)
    assert extra.status_code == 201 and extra.json()["role"] == "editor", extra.text
    ci = bearer(extra.json()["token"])
    assert site.api.get("/api/tenants/acme/documents", headers=ci).status_code == 200

    assert_error(
        site.api.post(f"/api/tenants/acme/tokens/{extra.json()['id']}/revoke", headers=site.owner),
        400,
        "confirmation_required",
    )
    revoked = site.api.post(
        f"/api/tenants/acme/tokens/{extra.json()['id']}/revoke", json={"confirm": True}, headers=site.owner
    )
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None, revoked.text
    assert_error(site.api.get("/api/tenants/acme/documents", headers=ci), 401, "unauthorized")
    assert site.api.get("/api/tenants/acme/documents", headers=eddie).status_code == 200
    listed = site.api.get("/api/tenants/acme/tokens", params={"revoked": "true"}, headers=site.owner).json()
    assert [t["revoked_at"] is not None for t in listed if t["id"] == extra.json()["id"]] == [True]
    assert extra.json()["id"] not in {
        t["id"] for t in site.api.get("/api/tenants/acme/tokens", headers=site.owner).json()
    }

    assert_error(
        site.api.request("DELETE", f"/api/tenants/acme/members/{member_id}", headers=site.owner),
        400,
        "confirmation_required",
    )
    removed = site.api.request(
        "DELETE", f"/api/tenants/acme/members/{member_id}", json={"confirm": True}, headers=site.owner
    )
    assert removed.status_code == 200 and removed.json()["revoked_tokens"] == 1, removed.text
    assert_error(site.api.get("/api/tenants/acme/documents", headers=eddie), 401, "unauthorized")
    assert member_id not in {m["id"] for m in site.members()}
    assert_error(
        site.api.patch(f"/api/tenants/acme/members/{member_id}", json={"role": "owner"}, headers=site.owner),
        404,
        "not_found",
    )


def test_an_idempotent_repeat_answers_the_first_answer_without_the_secret(site: Site) -> None:
    key = {"Idempotency-Key": "invite-1"}
    first = site.api.post(
        "/api/tenants/acme/members", json={"name": "Ivy", "role": "viewer"}, headers={**site.owner, **key}
    )
    again = site.api.post(
        "/api/tenants/acme/members", json={"name": "Ivy", "role": "viewer"}, headers={**site.owner, **key}
    )
    assert first.status_code == again.status_code == 201
    assert first.json()["token"]["token"].startswith("prt_")
    assert again.json()["token"]["token"] is None and again.json()["replayed"] is True
    assert again.json()["member"] == first.json()["member"]
    assert [m["name"] for m in site.members()].count("Ivy") == 1
    assert_error(
        site.api.post(
            "/api/tenants/acme/members", json={"name": "Ivy", "role": "editor"}, headers={**site.owner, **key}
        ),
        409,
        "idempotency_key_reused",
    )
    with Session(site.services.engine) as session:
        kept = [record.response for record in session.exec(select(IdempotencyRecord))]
    assert kept and first.json()["token"]["token"] not in repr(kept)


def test_the_audit_log_shows_who_did_what_newest_first_filtered_by_action(site: Site) -> None:
    olga = site.me(site.owner)
    doc = site.api.post("/api/tenants/acme/documents", json={"slug": "hello", "title": "Hello"}, headers=site.owner)
    assert doc.status_code == 201
    vera = site.invite("Vera", "viewer")["member"]["id"]
    site.api.patch(f"/api/tenants/acme/members/{vera}", json={"role": "editor"}, headers=site.owner)

    log = site.audit()
    actions = [e["action"] for e in log]
    assert actions[:3] == ["member.role.set", "member.invite", "content.create"], actions
    assert "token.issue" in actions and "tenant.create" in actions  # the operator's changes to the site
    newest = log[0]
    assert newest["actor"] == olga and newest["actor_name"] == "Olga" and newest["source"] == "control_plane"
    assert newest["object_id"] == vera and newest["data"] == {"role": "editor", "before": "viewer"}
    assert log[2]["source"] == "site" and log[2]["object_id"] == doc.json()["id"]
    stamps = [e["created_at"] for e in log]
    assert stamps == sorted(stamps, reverse=True)

    assert [e["action"] for e in site.audit(action="member.invite")] == ["member.invite"]
    assert [e["action"] for e in site.audit(action="content.create")] == ["content.create"]
    assert len(site.audit(limit=2)) == 2 and site.audit(limit=2, offset=1)[0] == log[1]
    # Older pages by cursor: following the Link headers walks the whole log once, in order.
    walked, url = [], "/api/tenants/acme/audit?limit=2"
    while url:
        answer = site.api.get(url, headers=site.owner)
        assert answer.status_code == 200, answer.text
        walked.extend(answer.json())
        url = answer.links.get("next", {}).get("url", "")
    assert walked == log
    schema = site.api.get("/schema/openapi.json").json()
    assert "Link" in schema["paths"]["/api/tenants/{tenant}/audit"]["get"]["responses"]["200"]["headers"]
    page = site.api.get("/api/tenants/acme/audit", params={"limit": 3, "action": "token.issue"}, headers=site.owner)
    assert "action=token.issue" in page.headers.get("link", "") or len(page.json()) < 3
    for bad in ({"limit": 0}, {"limit": 501}, {"limit": "ten"}, {"action": "Not Dotted"}, {"before": "x.1"}):
        assert_error(
            site.api.get("/api/tenants/acme/audit", params=bad, headers=site.owner), 400, "invalid_request", str(bad)
        )
    # Another tenant's log holds none of this.
    other = site.token("owner", "other")
    theirs = site.api.get("/api/tenants/other/audit", headers=other).json()
    assert not {e["object_id"] for e in theirs} & {vera, doc.json()["id"]}


def test_a_suspended_site_refuses_member_changes_with_423(site: Site) -> None:
    assert site.api.post("/ops/tenants/acme/suspend", headers=OPERATOR).status_code == 200
    assert_error(
        site.api.post("/api/tenants/acme/members", json={"name": "Late", "role": "viewer"}, headers=site.owner),
        423,
        "tenant_suspended",
    )


def test_member_commands_are_counted_by_kind_and_result(site: Site) -> None:
    def count(kind: str, result: str) -> float:
        return REGISTRY.get_sample_value("pressroom_commands_total", {"kind": kind, "result": result}) or 0.0

    before = (count("InviteMember", "ok"), count("SetMemberRole", "last_owner"))
    site.invite("Counted", "viewer")
    olga = site.me(site.owner)
    site.api.patch(f"/api/tenants/acme/members/{olga}", json={"role": "viewer"}, headers=site.owner)
    assert (count("InviteMember", "ok"), count("SetMemberRole", "last_owner")) == (before[0] + 1, before[1] + 1)
    # The filter's choices: every action either source holds for the site.
    owner = site.services.tokens.resolve(site.owner["Authorization"])
    assert {"member.invite", "tenant.create", "token.issue"} <= set(site.services.audit.actions(owner, "acme"))


def test_a_change_that_loses_a_race_is_a_409_and_writes_nothing(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy.exc import IntegrityError

    from control_plane.members import actions

    real = actions.invite

    def raced(*args: Any, **kwargs: Any) -> Any:
        real(*args, **kwargs)  # its rows are in the session, as a concurrent winner's would collide
        raise IntegrityError("INSERT", {}, Exception("UNIQUE constraint failed: pressroom_user.email"))

    monkeypatch.setattr(actions, "invite", raced)
    lost = site.api.post("/api/tenants/acme/members", json={"name": "Race", "role": "viewer"}, headers=site.owner)
    assert_error(lost, 409, "concurrent_change")
    monkeypatch.undo()
    assert "Race" not in {m["name"] for m in site.members()}
    assert "member.invite" not in {e["action"] for e in site.audit()}


def test_one_email_in_two_sites_has_each_sites_own_name_and_neither_site_sees_the_other_name(site: Site) -> None:
    """A second site's invitation of a known email joins the same person (one sign-in per site), but what
    it answers and lists is the name its own owner typed: never the name the first site stored."""
    first = site.invite("Alice Liddell (Acme legal)", "editor", email="alice@example.com")
    other_owner = site.token("owner", "other")
    answer = site.api.post(
        "/api/tenants/other/members",
        json={"name": "A. L.", "role": "viewer", "email": "Alice@example.com"},
        headers=other_owner,
    )
    assert answer.status_code == 201, answer.text
    second = answer.json()
    assert second["member"]["id"] == first["member"]["id"]  # the same person
    assert second["member"]["name"] == "A. L." and "Liddell" not in answer.text
    listed = site.api.get("/api/tenants/other/members", headers=other_owner).json()
    assert "A. L." in {m["name"] for m in listed} and "Liddell" not in str(listed)
    tokens = site.api.get("/api/tenants/other/tokens", headers=other_owner).json()
    assert "A. L." in {t["member_name"] for t in tokens} and "Liddell" not in str(tokens)
    # Acting in the other site, the audit log there names her as that site does; Acme's list is unchanged.
    viewer = bearer(second["token"]["token"])
    assert site.api.get("/api/tenants/other/documents", headers=viewer).status_code == 200
    audit = site.api.get("/api/tenants/other/audit", headers=other_owner).json()
    assert "Liddell" not in str(audit)
    assert "Alice Liddell (Acme legal)" in {m["name"] for m in site.members()}
