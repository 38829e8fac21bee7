"""Package format and verification: signed archives accepted, anything tampered, unsigned, untrusted or unsafe
refused with its code before a byte of it is written."""

from __future__ import annotations

import json
import tarfile
from datetime import timedelta

import pytest
from sqlmodel import select

from tenant_runtime.actions import packages
from tenant_runtime.errors import PackageRejected
from tenant_runtime.ids import utcnow
from tenant_runtime.packages import read_archive, verify_package
from tenant_runtime.packages.signing import decode_public_key, key_id
from tenant_runtime.packages.trust import PlatformKeyring, TrustedKey
from tenant_runtime.workspace import SYSTEM, AuditEntry, InstalledPackage, Operation, Workspace
from tests.tenant_runtime.package_kit import Publisher, pack, raw_tar, theme_files


@pytest.fixture(scope="module")
def publisher() -> Publisher:
    return Publisher()


def _keys(publisher: Publisher, **fields: object) -> dict[str, TrustedKey]:
    raw = decode_public_key(publisher.public_key)
    return {key_id(raw): TrustedKey(key_id(raw), raw, "tenant", "test", **fields)}  # type: ignore[arg-type]


def _code(data: bytes, keys: dict[str, TrustedKey]) -> str:
    with pytest.raises(PackageRejected) as caught:
        verify_package(data, keys, now=utcnow())
    return caught.value.code


def test_a_signed_theme_verifies_with_its_manifest_and_key(publisher: Publisher) -> None:
    verified = verify_package(publisher.theme(), _keys(publisher), now=utcnow())
    assert verified.manifest.ref == "magazine@1.0.0" and verified.manifest.kind == "theme"
    assert set(verified.files) == {"templates/page.html", "templates/home.html"}
    assert verified.key.scope == "tenant"


def test_the_manifest_may_be_reformatted_but_not_changed(publisher: Publisher) -> None:
    files = theme_files()
    manifest, signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    reordered = dict(reversed(list(manifest.items())))
    assert verify_package(pack(files, reordered, signature), _keys(publisher), now=utcnow())
    changed = {**manifest, "description": "now with more"}
    assert _code(pack(files, changed, signature), _keys(publisher)) == "package_signature_invalid"


def test_one_changed_byte_anywhere_is_refused(publisher: Publisher) -> None:
    files = theme_files()
    manifest, signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    keys = _keys(publisher)
    page = bytearray(files["templates/page.html"])
    page[10] ^= 1
    assert _code(pack({**files, "templates/page.html": bytes(page)}, manifest, signature), keys) == (
        "package_hash_mismatch"
    )
    listed = json.loads(json.dumps(manifest))
    listed["files"][0]["sha256"] = "0" * 64
    assert _code(pack(files, listed, signature), keys) == "package_signature_invalid"
    sig = bytearray(json.dumps(signature).encode())
    at = sig.index(b'"signature": "') + 20
    sig[at] = ord("A") if sig[at] != ord("A") else ord("B")
    members = {**files, "manifest.json": json.dumps(manifest).encode(), "signature.json": bytes(sig)}
    from tenant_runtime.packages import build_archive

    assert _code(build_archive(members), keys) == "package_signature_invalid"
    assert _code(pack({**files, "extra.txt": b"x"}, manifest, signature), keys) == "package_file_unlisted"
    assert _code(pack({"templates/page.html": files["templates/page.html"]}, manifest, signature), keys) == (
        "package_file_missing"
    )


def test_unsigned_untrusted_revoked_and_expired_are_refused(publisher: Publisher) -> None:
    files = theme_files()
    manifest, _signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    assert _code(pack(files, manifest, None), _keys(publisher)) == "package_unsigned"
    assert _code(publisher.theme(), _keys(Publisher())) == "package_untrusted"
    past = utcnow() - timedelta(minutes=1)
    for fields in ({"revoked_at": past}, {"expires_at": past}):
        with pytest.raises(PackageRejected) as caught:
            verify_package(publisher.theme(), _keys(publisher, **fields), now=utcnow())
        assert caught.value.code == "package_untrusted"
        assert caught.value.details["key_status"] in ("revoked", "expired")


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        (tarfile.TarInfo("../escape.html"), "package_unsafe_path"),
        (tarfile.TarInfo("/etc/passwd"), "package_unsafe_path"),
        (tarfile.TarInfo("templates/../../x"), "package_unsafe_path"),
    ],
)
def test_paths_leaving_the_package_are_refused(member: tarfile.TarInfo, expected: str) -> None:
    with pytest.raises(PackageRejected) as caught:
        read_archive(raw_tar([member], {member.name: b"x"}))
    assert caught.value.code == expected


def test_symlinks_and_hard_links_are_refused() -> None:
    for kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        link = tarfile.TarInfo("templates/page.html")
        link.type, link.linkname = kind, "/etc/passwd"
        with pytest.raises(PackageRejected) as caught:
            read_archive(raw_tar([link], {}))
        assert caught.value.code == "package_unsafe_path"


def test_garbage_and_oversized_archives_are_refused() -> None:
    with pytest.raises(PackageRejected) as caught:
        read_archive(b"not a tar at all")
    assert caught.value.code == "package_invalid"
    with pytest.raises(PackageRejected) as caught:
        read_archive(b"x" * 2048, max_bytes=1024)
    assert caught.value.code == "package_too_large"


def test_a_theme_that_does_not_render_is_refused_at_install(publisher: Publisher) -> None:
    files = {**theme_files(), "templates/page.html": b"{{ doc.no_such_field.deeper }}"}
    with pytest.raises(PackageRejected) as caught:
        verify_package(
            publisher.archive(files, name="broken", version="1.0.0", kind="theme"), _keys(publisher), now=utcnow()
        )
    assert caught.value.code == "theme_invalid" and caught.value.details["template"] == "page.html"


def test_a_lane_without_a_graph_is_refused_by_the_lanes_check(publisher: Publisher) -> None:
    # The lanes area replaced the placeholder kind (lane_graph_unchecked) with its graph check.
    archive = publisher.archive({"lane.json": b"{}"}, name="research", version="1.0.0", kind="lane")
    assert _code(archive, _keys(publisher)) == "lane_graph_invalid"


def test_the_platform_keyring_adds_expires_and_revokes(tmp_path, publisher: Publisher) -> None:  # type: ignore[no-untyped-def]
    ring = PlatformKeyring.under(tmp_path)
    added = ring.add(publisher.public_key, name="acme publishing")
    assert ring.keys()[added.key_id].status(utcnow()) == "trusted"
    ring.expire(added.key_id, utcnow() - timedelta(seconds=1))
    assert ring.keys()[added.key_id].status(utcnow()) == "expired"
    ring.add(publisher.public_key, name="renewed")
    ring.revoke(added.key_id)
    assert ring.keys()[added.key_id].status(utcnow()) == "revoked"


# --- the install request: nothing written for a refused package ---------------------------------------


def _nothing_written(ws: Workspace) -> None:
    with ws.reader() as tx:
        assert tx.exec(select(InstalledPackage)).all() == []
        assert tx.exec(select(Operation)).all() == []
        assert [a.action for a in tx.exec(select(AuditEntry)).all() if a.action.startswith("package.install")] == []
    assert list(ws.store.list("packages/")) == []


def test_a_refused_upload_writes_nothing(workspace: Workspace, publisher: Publisher) -> None:
    files = theme_files()
    manifest, signature = publisher.files_and_signature(files, name="magazine", version="1.0.0", kind="theme")
    tampered = pack({**files, "templates/home.html": files["templates/home.html"] + b" "}, manifest, signature)
    with workspace.transaction() as tx:
        packages.add_key(tx, SYSTEM, publisher.public_key, name="publisher")
    for archive, code in (
        (tampered, "package_hash_mismatch"),
        (pack(files, manifest, None), "package_unsigned"),
        (Publisher().theme(), "package_untrusted"),
    ):
        with pytest.raises(PackageRejected) as caught, workspace.transaction() as tx:
            packages.request_install(tx, workspace, SYSTEM, archive)
        assert caught.value.code == code
        _nothing_written(workspace)


def test_the_shipped_example_theme_verifies_and_matches_its_source() -> None:
    from tenant_runtime.example_packages import EXAMPLE_PUBLISHER_KEY, EXAMPLE_THEME, EXAMPLE_THEME_SOURCE
    from tenant_runtime.packages import directory_files

    raw = decode_public_key(EXAMPLE_PUBLISHER_KEY)
    keys = {key_id(raw): TrustedKey(key_id(raw), raw, "platform")}
    verified = verify_package(EXAMPLE_THEME.read_bytes(), keys, now=utcnow())
    assert verified.manifest.ref == "magazine@1.0.0" and verified.manifest.kind == "theme"
    source = directory_files(EXAMPLE_THEME_SOURCE)
    source.pop("package.json")
    assert verified.files == source, "re-sign tenant_runtime/example_packages/magazine after changing it"


def test_a_plugin_with_an_unacceptable_hook_is_refused_before_anything_is_written(publisher: Publisher) -> None:
    for hook in ({"event": "after_publish", "url": "javascript:alert(1)"}, {"event": "nope", "url": "https://x.test/"}):
        archive = publisher.archive(
            {"README.md": b"x"}, name="notifier", version="1.0.0", kind="plugin", contributions={"hooks": [hook]}
        )
        with pytest.raises(PackageRejected) as caught:
            verify_package(archive, _keys(publisher), now=utcnow())
        assert caught.value.code == "plugin_invalid" and caught.value.details["hook"] == hook


def test_a_plugin_hook_naming_a_private_address_is_refused_unless_the_operator_allows_private_webhooks(
    publisher: Publisher,
) -> None:
    hook = {"event": "after_publish", "url": "http://169.254.169.254/latest/meta-data"}
    archive = publisher.archive(
        {"README.md": b"x"}, name="notifier", version="1.0.0", kind="plugin", contributions={"hooks": [hook]}
    )
    with pytest.raises(PackageRejected) as caught:
        verify_package(archive, _keys(publisher), now=utcnow())
    assert caught.value.code == "plugin_invalid" and caught.value.details["host"] == "169.254.169.254"
    assert "private address" in caught.value.message
    allowed = verify_package(archive, _keys(publisher), now=utcnow(), allow_private_webhooks=True)
    assert allowed.manifest.ref == "notifier@1.0.0"
