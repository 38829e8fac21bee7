"""Packages in the dashboard: trust a key, install a signed archive (a tampered one refused with nothing
stored), see its versions, roll back, uninstall, expire and revoke keys; roles and tenants enforced."""

from __future__ import annotations

import io
import tarfile

from tenant_runtime.actions import packages as package_actions
from tenant_runtime.example_packages import EXAMPLE_PUBLISHER_KEY, EXAMPLE_THEME
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import Workspace
from tests.dashboard.conftest import OPERATOR, ORIGIN, Browser, Dashboard
from tests.dashboard.test_dashboard import _flash
from tests.fixtures.source_server import SourceServer

S = "/dashboard/sites/acme/packages"


def _upload(browser: Browser, archive: bytes, **ticks: str) -> str:
    page = browser.get(S)
    key = page.text.split('name="form_key" value="')[1].split('"')[0]
    response = browser.client.post(
        S,
        data={"csrf_token": browser.csrf, "form_key": key, **ticks},
        files={"file": ("package.tar.gz", archive, "application/gzip")},
        headers={"Origin": ORIGIN},
    )
    assert response.status_code == 200, response.text
    return response.text


def _run_operations(dashboard: Dashboard, ws: Workspace) -> None:
    """What the install_package flow does for each queued install operation, without Prefect."""
    for operation in dashboard.operations("acme"):
        if operation.flow_name != "install_package" or operation.status != "queued":
            continue
        params = InstallPackageParameters.model_validate(operation.parameters)
        if params.action == "uninstall":
            package_actions.deactivate(ws, params)
        else:
            package_actions.verify_stored(ws, params)
            package_actions.stage(ws, params)
            package_actions.activate(ws, params)
        with ws.transaction() as tx:
            row = tx.get(type(operation), operation.id)
            assert row is not None
            row.status = "succeeded"
            tx.add(row)


def _tampered(archive: bytes) -> bytes:
    """The example archive with one byte of one template changed (its manifest and signature kept)."""
    out = io.BytesIO()
    with (
        tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as source,
        tarfile.open(fileobj=out, mode="w:gz") as target,
    ):
        for member in source.getmembers():
            data = source.extractfile(member).read() if member.isfile() else b""  # type: ignore[union-attr]
            if member.isfile() and member.name.endswith(".html"):
                data = data[:-1] + (b"x" if data[-1:] != b"x" else b"y")
            member.size = len(data)
            target.addfile(member, io.BytesIO(data) if member.isfile() else None)
    return out.getvalue()


def test_an_owner_trusts_a_key_installs_rolls_back_and_uninstalls(dashboard: Dashboard) -> None:
    token = dashboard.tenant("acme")
    owner = dashboard.browser(token)
    ws = dashboard.factory.open("acme")
    archive = EXAMPLE_THEME.read_bytes()
    assert "trusts no publisher keys yet" in owner.get(S).text

    refused = _upload(owner, archive, confirm="yes")
    assert "package_untrusted" in _flash(refused)
    assert "Packages signed by" in _flash(owner.post(f"{S}/keys", {"public_key": EXAMPLE_PUBLISHER_KEY}).text)
    [key] = [k for k in dashboard.services.packages.keys(OPERATOR, "acme") if k.scope == "tenant"]

    assert "confirmation_required" in _upload(owner, archive)
    tampered = _upload(owner, _tampered(archive), confirm="yes")
    assert "package_hash_mismatch" in _flash(tampered)
    assert not ws.store.list("tenants/acme/packages/")

    installed = _upload(owner, archive, confirm="yes")
    assert "magazine 1.0.0 (theme) is verified" in _flash(installed)
    _run_operations(dashboard, ws)
    listing = owner.get(S).text
    assert 'id="package-magazine"' in listing and 'data-version="1.0.0" data-status="active"' in listing
    assert f'id="key-{key.key_id}" data-status="trusted"' in listing

    rollback = owner.post(f"{S}/magazine/rollback", {"version": "0.9.0", "confirm": "yes"})
    assert "package_not_found" in _flash(rollback.text)  # no other version installed: refused in words
    unconfirmed = owner.post(f"{S}/magazine/uninstall", {})
    assert "confirmation_required" in unconfirmed.text
    gone = owner.post(f"{S}/magazine/uninstall", {"confirm": "yes"})
    assert "takes magazine off the site" in _flash(gone.text)
    _run_operations(dashboard, ws)
    assert 'id="package-magazine"' not in owner.get(S).text

    expired = owner.post(f"{S}/keys/{key.key_id}/expire", {"at": "2030-01-01T00:00"})
    assert "trusted until 2030-01-01T00:00 UTC" in _flash(expired.text)
    assert "is revoked" in _flash(owner.post(f"{S}/keys/{key.key_id}/revoke", {}).text)
    assert f'id="key-{key.key_id}" data-status="revoked"' in owner.get(S).text


def test_an_editor_sees_no_controls_and_another_tenants_session_gets_404(dashboard: Dashboard) -> None:
    dashboard.tenant("acme")
    editor = dashboard.browser(dashboard.tenant("acme", role="editor"))
    page = editor.get(S)
    assert page.status_code == 200 and 'id="install"' not in page.text and "Trust this key" not in page.text
    denied = editor.post(f"{S}/keys", {"public_key": EXAMPLE_PUBLISHER_KEY})
    assert "does not allow site.admin" in _flash(denied.text)

    stranger = dashboard.browser(dashboard.tenant("globex"))
    assert stranger.get(S).status_code == 404
    assert stranger.post(f"{S}/keys", {"public_key": EXAMPLE_PUBLISHER_KEY}).status_code == 404
    assert stranger.post(f"{S}/magazine/uninstall", {"confirm": "yes"}).status_code == 404
    assert stranger.post(f"{S}/keys/k_x/revoke", {}).status_code == 404
    assert [k for k in dashboard.services.packages.keys(OPERATOR, "acme") if k.scope == "tenant"] == []


def test_a_package_url_off_the_operators_allow_list_is_refused_in_words(
    dashboard: Dashboard, source_server: SourceServer
) -> None:
    owner = dashboard.browser(dashboard.tenant("acme"))
    source_server.files["/magazine.tar.gz"] = EXAMPLE_THEME.read_bytes()
    page = owner.get(S)
    key = page.text.split('name="form_key" value="')[1].split('"')[0]
    answer = owner.client.post(
        S,
        data={
            "csrf_token": owner.csrf,
            "form_key": key,
            "url": source_server.url("/magazine.tar.gz"),
            "confirm": "yes",
        },
        files={"file": ("", b"", "application/octet-stream")},
        headers={"Origin": ORIGIN},
    )
    assert answer.status_code == 200 and "package_url_not_allowed" in _flash(answer.text)
    assert source_server.fetches["/magazine.tar.gz"] == 0
