"""The packages API over the recording twin of Prefect: verified in the request, refused with a code and nothing
written, accepted as a queued install_package operation; trusted keys per tenant and for the platform."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import TestClient
from sqlmodel import select

from control_plane.app import create_app
from control_plane.container import Services
from dispatch.prefect_twin import RecordingPrefect
from tenant_runtime.actions import packages
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import Operation
from tests.fixtures.http_errors import assert_error
from tests.fixtures.source_server import SourceServer
from tests.fixtures.stack import OPERATOR_TOKEN, make_settings
from tests.tenant_runtime.package_kit import Publisher, pack, theme_files

OPERATOR = {"Authorization": f"Bearer {OPERATOR_TOKEN}"}


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient[Any], Services]]:
    settings = make_settings(tmp_path_factory.mktemp("packages-api") / "data")
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as client:
        yield client, services


def _tenant(api: TestClient[Any], slug: str, role: str = "owner") -> dict[str, str]:
    assert api.post("/ops/tenants", json={"slug": slug, "name": slug}, headers=OPERATOR).status_code == 201
    token = api.post(f"/ops/tenants/{slug}/tokens", json={"role": role}, headers=OPERATOR).json()["token"]
    return {"Authorization": f"Bearer {token}"}


def _install(api: TestClient[Any], slug: str, headers: dict[str, str], archive: bytes, **extra: Any) -> Any:
    body = {"archive": base64.b64encode(archive).decode(), "confirm": True, **extra}
    return api.post(f"/api/tenants/{slug}/packages", json=body, headers=headers)


def test_tampered_unsigned_and_untrusted_packages_are_refused_with_nothing_written(
    room: tuple[TestClient[Any], Services],
) -> None:
    api, services = room
    owner = _tenant(api, "refuses")
    publisher = Publisher()
    added = api.post("/api/tenants/refuses/package-keys", json={"public_key": publisher.public_key}, headers=owner)
    assert added.status_code == 201 and added.json()["status"] == "trusted" and added.json()["scope"] == "tenant"
    files = theme_files()
    manifest, signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    flipped = bytearray(files["templates/page.html"])
    flipped[0] ^= 0x20
    changed_manifest = {**manifest, "version": "1.0.1"}
    cases = {
        "package_hash_mismatch": pack({**files, "templates/page.html": bytes(flipped)}, manifest, signature),
        "package_signature_invalid": pack(files, changed_manifest, signature),
        "package_unsigned": pack(files, manifest, None),
        "package_untrusted": Publisher().theme(),
        "package_invalid": b"\x1f\x8b not really",
    }
    for code, archive in cases.items():
        assert_error(_install(api, "refuses", owner, archive), 422, code, code)
    assert_error(
        api.post("/api/tenants/refuses/packages", json={"archive": "%%%", "confirm": True}, headers=owner),
        400,
        "invalid_request",
    )
    assert api.get("/api/tenants/refuses/packages", headers=owner).json() == []
    assert api.get("/api/tenants/refuses/operations", headers=owner).json() == []
    assert services.factory is not None
    store = services.factory.store
    assert [k for k in store.list("tenants/refuses/") if "/packages/" in k] == []


def test_a_signed_package_is_queued_and_only_site_admins_may_install(room: tuple[TestClient[Any], Services]) -> None:
    api, _ = room
    owner = _tenant(api, "installs")
    editor = {
        "Authorization": "Bearer "
        + api.post("/ops/tenants/installs/tokens", json={"role": "editor"}, headers=OPERATOR).json()["token"]
    }
    publisher = Publisher()
    api.post("/api/tenants/installs/package-keys", json={"public_key": publisher.public_key}, headers=owner)
    archive = publisher.theme()
    assert_error(_install(api, "installs", editor, archive), 403, "forbidden")
    assert_error(_install(api, "installs", owner, archive, confirm=False), 400, "confirmation_required")
    accepted = _install(api, "installs", owner, archive, pin_theme=True)
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    assert body["package"] == {"name": "magazine", "version": "1.0.0", "kind": "theme"} and body["status"] == "queued"
    operation = api.get(f"/api/tenants/installs/operations/{body['operation_id']}", headers=owner).json()
    assert operation["kind"] == "package" and operation["workflow"] == "install_package"


def test_platform_keys_are_trusted_by_every_tenant_until_revoked(room: tuple[TestClient[Any], Services]) -> None:
    api, _ = room
    owner = _tenant(api, "platformed")
    publisher = Publisher()
    assert_error(
        api.post("/ops/package-keys", json={"public_key": publisher.public_key}, headers=owner), 403, "forbidden"
    )
    added = api.post("/ops/package-keys", json={"public_key": publisher.public_key, "name": "vendor"}, headers=OPERATOR)
    assert added.status_code == 201 and added.json()["scope"] == "platform"
    keys = api.get("/api/tenants/platformed/package-keys", headers=owner).json()
    assert [(k["key_id"], k["scope"]) for k in keys] == [(added.json()["key_id"], "platform")]
    assert _install(api, "platformed", owner, publisher.theme(name="vendor-theme")).status_code == 202
    revoked = api.post(f"/ops/package-keys/{added.json()['key_id']}/revoke", json={}, headers=OPERATOR)
    assert revoked.json()["status"] == "revoked"
    assert_error(_install(api, "platformed", owner, publisher.theme(name="other-theme")), 422, "package_untrusted")
    audit = api.get("/ops/audit?action=package.key.platform.revoke", headers=OPERATOR).json()
    assert [a["object_id"] for a in audit] == [added.json()["key_id"]]
    assert json.loads(json.dumps(keys))  # plain JSON


def _run_installs(services: Services, slug: str) -> None:
    """What the install_package runs of the queued operations do (the twin of Prefect runs none)."""
    assert services.factory is not None
    ws = services.factory.open(slug)
    with ws.reader() as tx:
        queued = list(tx.exec(select(Operation).where(Operation.status == "queued").order_by(Operation.created_at)))
    for operation in queued:
        params = InstallPackageParameters.model_validate(operation.parameters)
        packages.verify_stored(ws, params)
        packages.stage(ws, params)
        packages.activate(ws, params)
        with ws.transaction() as tx:
            row = tx.get(Operation, operation.id)
            assert row is not None
            row.status = "succeeded"
            tx.add(row)


def test_an_idempotency_key_makes_a_repeated_rollback_or_uninstall_one_operation(
    room: tuple[TestClient[Any], Services],
) -> None:
    api, services = room
    owner = _tenant(api, "rolls")
    publisher = Publisher()
    api.post("/api/tenants/rolls/package-keys", json={"public_key": publisher.public_key}, headers=owner)
    for version in ("1.0.0", "1.1.0"):
        assert _install(api, "rolls", owner, publisher.theme(version=version)).status_code == 202
        _run_installs(services, "rolls")
    for change, body in (("rollback", {"confirm": True}), ("uninstall", {"confirm": True})):
        headers = {**owner, "Idempotency-Key": f"{change}-1"}
        first = api.post(f"/api/tenants/rolls/packages/magazine/{change}", json=body, headers=headers)
        again = api.post(f"/api/tenants/rolls/packages/magazine/{change}", json=body, headers=headers)
        assert first.status_code == again.status_code == 202, first.text
        assert again.json()["operation_id"] == first.json()["operation_id"] and again.json()["replayed"] is True
    operations = api.get("/api/tenants/rolls/operations", headers=owner).json()
    assert len(operations) == 4  # two installs, one rollback, one uninstall


@pytest.fixture
def fetching_room(tmp_path: Path) -> Iterator[tuple[TestClient[Any], Services]]:
    """A control plane whose operator allows package URLs on 127.0.0.1 (a private address, allowed too)."""
    base = make_settings(tmp_path / "data")
    control = base.control_plane.model_copy(
        update={"package_fetch_allow": ("127.0.0.1",), "package_fetch_allow_private": True}
    )
    settings = dataclasses.replace(base, control_plane=control)
    services = Services.build(settings, prefect=RecordingPrefect(), relay_prefect=RecordingPrefect())
    with TestClient(create_app(settings, services=services)) as client:
        yield client, services


def test_a_package_is_installed_from_an_allowed_url_only_verified_and_only_for_an_admin_who_confirmed(
    fetching_room: tuple[TestClient[Any], Services], source_server: SourceServer
) -> None:
    api, services = fetching_room
    owner = _tenant(api, "fetches")
    editor = {
        "Authorization": "Bearer "
        + api.post("/ops/tenants/fetches/tokens", json={"role": "editor"}, headers=OPERATOR).json()["token"]
    }
    publisher = Publisher()
    api.post("/api/tenants/fetches/package-keys", json={"public_key": publisher.public_key}, headers=owner)
    files = theme_files()
    manifest, signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    source_server.files["/good.tar.gz"] = pack(files, manifest, signature)
    source_server.files["/bad.tar.gz"] = pack({**files, "templates/page.html": b"changed"}, manifest, signature)
    url = source_server.url("/good.tar.gz")

    def install(headers: dict[str, str], **body: Any) -> Any:
        return api.post("/api/tenants/fetches/packages", json={"confirm": True, **body}, headers=headers)

    assert_error(install(editor, url=url), 403, "forbidden")
    assert_error(install(owner, url=url, confirm=False), 400, "confirmation_required")
    assert source_server.fetches["/good.tar.gz"] == 0  # nobody who may not install makes us fetch
    assert_error(install(owner, url=url, archive=base64.b64encode(b"x").decode()), 400, "invalid_request")
    assert_error(install(owner), 400, "invalid_request")
    assert_error(install(owner, url="http://example.com/x.tar.gz"), 422, "package_url_not_allowed")

    assert_error(install(owner, url=source_server.url("/bad.tar.gz")), 422, "package_hash_mismatch")
    store = services.factory.store if services.factory is not None else None
    assert store is not None and [k for k in store.list("tenants/fetches/") if "/packages/" in k] == []
    assert api.get("/api/tenants/fetches/operations", headers=owner).json() == []

    accepted = install(owner, url=url)
    assert accepted.status_code == 202, accepted.text
    assert accepted.json()["package"] == {"name": "magazine", "version": "1.0.0", "kind": "theme"}
    assert source_server.fetches["/good.tar.gz"] == 1


def test_without_an_allow_list_no_url_is_fetched(
    room: tuple[TestClient[Any], Services], source_server: SourceServer
) -> None:
    api, _ = room
    owner = _tenant(api, "no-fetch")
    source_server.files["/p.tar.gz"] = b"\x1f\x8b"
    answer = api.post(
        "/api/tenants/no-fetch/packages", json={"url": source_server.url("/p.tar.gz"), "confirm": True}, headers=owner
    )
    assert_error(answer, 422, "package_url_not_allowed")
    assert source_server.fetches["/p.tar.gz"] == 0
