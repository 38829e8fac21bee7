"""The install run's logic over twins: stage, activate in one transaction, upgrade, rollback, uninstall, plugins."""

from __future__ import annotations

import pytest
from sqlmodel import select

from tenant_runtime import delivery
from tenant_runtime.actions import documents, packages, publishing
from tenant_runtime.errors import Conflict, PackageRejected
from tenant_runtime.packages.themes import pinned_theme, site_theme
from tenant_runtime.rendering.theme import PackageTheme
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import SYSTEM, InstalledPackage, Operation, WebhookEndpoint, Workspace
from tests.tenant_runtime.package_kit import Publisher


@pytest.fixture(scope="module")
def publisher() -> Publisher:
    return Publisher()


@pytest.fixture
def trusted(workspace: Workspace, publisher: Publisher) -> Workspace:
    with workspace.transaction() as tx:
        packages.add_key(tx, SYSTEM, publisher.public_key, name="publisher")
    return workspace


def _run(ws: Workspace, operation: Operation) -> dict[str, object]:
    """What the install_package flow does, step by step, without Prefect."""
    params = InstallPackageParameters.model_validate(operation.parameters)
    if params.action == "uninstall":
        return packages.deactivate(ws, params)
    packages.verify_stored(ws, params)
    packages.stage(ws, params)
    return packages.activate(ws, params)


def _install(ws: Workspace, archive: bytes, **options: object) -> dict[str, object]:
    with ws.transaction() as tx:
        operation, _ = packages.request_install(tx, ws, SYSTEM, archive, **options)  # type: ignore[arg-type]
    return _run(ws, operation)


def _published_page(ws: Workspace) -> str:
    with ws.transaction() as tx:
        doc = documents.create_document(tx, SYSTEM, slug="hello", title="Hello", body="Hi *there*", kind="post")
        publishing.publish_document(tx, ws.tenant, SYSTEM, doc.id, expected_version=doc.version)
    return doc.id


def _page(ws: Workspace, doc_id: str) -> str:
    delivery.render_document_page(ws, doc_id, 1, "op_test")
    page = ws.store.get(delivery.page_key("hello"))
    assert page is not None
    return page.decode()


def test_a_pinned_theme_renders_every_page_and_its_upgrade_and_rollback_follow(
    trusted: Workspace, publisher: Publisher
) -> None:
    ws = trusted
    doc_id = _published_page(ws)
    assert "magazine" not in _page(ws, doc_id)

    first = _install(ws, publisher.theme(version="1.0.0", marker="magazine-one"), pin_theme=True)
    assert first == {"package": "magazine@1.0.0", "kind": "theme", "previous": None, "site_changed": True}
    with ws.reader() as tx:
        assert pinned_theme(tx) == "magazine" and isinstance(site_theme(ws, tx), PackageTheme)
    assert 'class="magazine-one"' in _page(ws, doc_id)
    assert ws.store.exists("packages/magazine/1.0.0/files/templates/page.html")

    upgraded = _install(ws, publisher.theme(version="1.1.0", marker="magazine-two"))
    assert upgraded["previous"] == "magazine@1.0.0" and upgraded["site_changed"] is True
    assert 'class="magazine-two"' in _page(ws, doc_id)

    with ws.transaction() as tx:
        rollback = packages.request_rollback(tx, ws, SYSTEM, "magazine")
    assert _run(ws, rollback)["package"] == "magazine@1.0.0"
    assert 'class="magazine-one"' in _page(ws, doc_id)
    with ws.reader() as tx:
        statuses = {r.version: r.status for r in tx.exec(select(InstalledPackage)).all()}
    assert statuses == {"1.0.0": "active", "1.1.0": "inactive"}


def test_a_retried_activation_changes_nothing_twice(trusted: Workspace, publisher: Publisher) -> None:
    with trusted.transaction() as tx:
        operation, _ = packages.request_install(tx, trusted, SYSTEM, publisher.theme(), pin_theme=True)
    first = _run(trusted, operation)
    with trusted.reader() as tx:
        pins = tx.exec(select(InstalledPackage)).all()
    again = _run(trusted, operation)
    assert again == {**first, "previous": None} and again["site_changed"] is True
    with trusted.reader() as tx:
        assert len(tx.exec(select(InstalledPackage)).all()) == len(pins) == 1


def test_an_installed_version_is_not_installed_again_and_a_pinned_theme_is_not_uninstalled(
    trusted: Workspace, publisher: Publisher
) -> None:
    archive = publisher.theme()
    _install(trusted, archive, pin_theme=True)
    with pytest.raises(Conflict) as caught, trusted.transaction() as tx:
        packages.request_install(tx, trusted, SYSTEM, archive)
    assert caught.value.code == "package_active"
    with pytest.raises(Conflict) as caught, trusted.transaction() as tx:
        packages.request_install(tx, trusted, SYSTEM, publisher.theme(marker="other"))
    assert caught.value.code == "package_version_exists"
    with pytest.raises(Conflict) as caught, trusted.transaction() as tx:
        packages.request_uninstall(tx, trusted, SYSTEM, "magazine")
    assert caught.value.code == "package_in_use"


def test_an_unpinned_theme_is_selectable_then_uninstalled(trusted: Workspace, publisher: Publisher) -> None:
    from tenant_runtime.actions import site_resources

    assert _install(trusted, publisher.theme())["site_changed"] is False
    with trusted.transaction() as tx:
        site_resources.update_resource(tx, SYSTEM, "theme", {"name": "magazine"}, expected_version=0)
        uninstall = packages.request_uninstall(tx, trusted, SYSTEM, "magazine")
    assert _run(trusted, uninstall) == {"package": "magazine", "uninstalled": 1}
    with pytest.raises(Exception) as caught, trusted.transaction() as tx:
        site_resources.update_resource(tx, SYSTEM, "theme", {"name": "magazine"}, expected_version=1)
    assert getattr(caught.value, "code", None) == "theme_not_found"


def test_a_key_revoked_after_the_upload_fails_the_run_before_anything_is_staged(
    trusted: Workspace, publisher: Publisher
) -> None:
    with trusted.transaction() as tx:
        operation, verified = packages.request_install(tx, trusted, SYSTEM, publisher.theme())
        packages.revoke_key(tx, SYSTEM, verified.key.key_id)
    params = InstallPackageParameters.model_validate(operation.parameters)
    with pytest.raises(PackageRejected) as caught:
        packages.stage(trusted, params)
    assert caught.value.code == "package_untrusted"
    assert not trusted.store.exists("packages/magazine/1.0.0/manifest.json")


def test_a_plugin_registers_its_hooks_and_its_uninstall_disables_them(trusted: Workspace, publisher: Publisher) -> None:
    archive = publisher.archive(
        {"README.md": b"notify"},
        name="notifier",
        version="1.0.0",
        kind="plugin",
        contributions={"hooks": [{"event": "after_publish", "url": "https://hooks.example/notify"}]},
    )
    _install(trusted, archive)
    with trusted.reader() as tx:
        (endpoint,) = tx.exec(select(WebhookEndpoint)).all()
    assert endpoint.url == "https://hooks.example/notify" and endpoint.enabled
    with trusted.transaction() as tx:
        operation = packages.request_uninstall(tx, trusted, SYSTEM, "notifier")
    _run(trusted, operation)
    with trusted.reader() as tx:
        assert [e.enabled for e in tx.exec(select(WebhookEndpoint)).all()] == [False]
