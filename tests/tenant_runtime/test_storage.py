"""Unit tests of the object-store seam: the contract on the memory and filesystem adapters, key rules, settings."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tenant_runtime import storage
from tenant_runtime.config import SettingsError
from tenant_runtime.errors import InvalidObjectKey, InvalidSlug
from tenant_runtime.settings import RuntimeSettings
from tenant_runtime.storage import (
    FilesystemStore,
    MemoryStore,
    ObjectStore,
    S3Store,
    StorageSettings,
    TenantStore,
    build_object_store,
    validate_key,
    validate_prefix,
)

VALID_KEYS = [
    "a",
    "a/b",
    "tenants/acme/site/index.html",
    ".well-known/security.txt",
    "a~b@c+d=e-f_g.h",
    "...",
    "..a/b..",
    "x" * 512,
    "/".join(["s"] * 256),
]

INVALID_KEYS = [
    pytest.param("", id="empty"),
    pytest.param("x" * 513, id="too-long"),
    pytest.param("/abs", id="absolute"),
    pytest.param("/", id="root"),
    pytest.param("a/../b", id="traversal-middle"),
    pytest.param("../b/x", id="traversal-leading"),
    pytest.param("..", id="dotdot"),
    pytest.param(".", id="dot"),
    pytest.param("./a", id="dot-segment"),
    pytest.param("a/.", id="trailing-dot-segment"),
    pytest.param("a//b", id="double-slash"),
    pytest.param("a/", id="trailing-slash"),
    pytest.param("%2e%2e/x", id="percent-dotdot"),
    pytest.param("a%2Fb", id="percent-slash"),
    pytest.param("a\\b", id="backslash"),
    pytest.param("..\\x", id="backslash-traversal"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("a\nb", id="newline"),
    pytest.param("a\x7fb", id="del"),
    pytest.param("a\tb", id="tab"),
    pytest.param("a b", id="space"),
    pytest.param("a?b", id="question-mark"),
    pytest.param("a#b", id="hash"),
    pytest.param("a:b", id="colon"),
    pytest.param("a*b", id="star"),
    pytest.param("caf\u00e9", id="non-ascii"),
    pytest.param("a/\uff0e\uff0e/b", id="fullwidth-dots"),
]


class ObjectStoreContract:
    """Behaviour every ``ObjectStore`` adapter must share; subclasses provide a ``store`` fixture."""

    def test_satisfies_protocol(self, store: ObjectStore) -> None:
        assert isinstance(store, ObjectStore)

    def test_round_trip(self, store: ObjectStore) -> None:
        store.put("site/index.html", b"<h1>hi</h1>", content_type="text/html")
        assert store.get("site/index.html") == b"<h1>hi</h1>"
        assert store.exists("site/index.html")

    def test_round_trip_binary_and_empty(self, store: ObjectStore) -> None:
        payload = bytes(range(256)) * 4
        store.put("bin/all-bytes", payload)
        store.put("bin/empty", b"")
        assert store.get("bin/all-bytes") == payload
        assert store.get("bin/empty") == b""
        assert store.exists("bin/empty")

    def test_overwrite_replaces(self, store: ObjectStore) -> None:
        store.put("k", b"first, and longer")
        store.put("k", b"second")
        assert store.get("k") == b"second"
        assert store.list("") == ["k"]

    def test_missing_key(self, store: ObjectStore) -> None:
        assert store.get("nope/missing") is None
        assert not store.exists("nope/missing")

    def test_delete_is_idempotent(self, store: ObjectStore) -> None:
        store.put("d/x", b"1")
        assert store.delete("d/x") is True
        assert store.get("d/x") is None
        assert not store.exists("d/x")
        assert store.delete("d/x") is False
        assert store.delete("never/was") is False

    def test_delete_leaves_siblings(self, store: ObjectStore) -> None:
        store.put("d/x", b"1")
        store.put("d/y", b"2")
        store.delete("d/x")
        assert store.list("") == ["d/y"]

    def test_list_sorted_and_prefix_filtered(self, store: ObjectStore) -> None:
        # No key is also a "directory" of another: the filesystem adapter cannot hold both.
        keys = ["b/2", "a/b/x", "a/1", "a/bc/d", "a/b-c", "ab", "c", "a/0"]
        for key in keys:
            store.put(key, key.encode())
        assert store.list("") == sorted(keys)
        assert store.list("a/") == ["a/0", "a/1", "a/b-c", "a/b/x", "a/bc/d"]
        assert store.list("a/b") == ["a/b-c", "a/b/x", "a/bc/d"]
        assert store.list("a/b/") == ["a/b/x"]
        assert store.list("a") == ["a/0", "a/1", "a/b-c", "a/b/x", "a/bc/d", "ab"]
        assert store.list("zzz") == []
        assert store.list("zzz/") == []

    def test_key_and_prefix_of_same_name(self, store: ObjectStore) -> None:
        store.put("posts/hello", b"post")
        store.put("posts/hello-world", b"other")
        assert store.list("posts/hello") == ["posts/hello", "posts/hello-world"]

    def test_streams_in_and_out_in_chunks(self, store: ObjectStore) -> None:
        payload = bytes(range(256)) * (3 * 4096 + 17)  # several chunks and a ragged end
        store.put_stream("big/blob", io.BytesIO(payload), content_type="application/octet-stream")
        reader = store.reader("big/blob")
        assert reader is not None
        try:
            chunks = list(iter(lambda: reader.read(1 << 18), b""))
        finally:
            reader.close()
        assert b"".join(chunks) == payload and len(chunks) > 1
        assert store.get("big/blob") == payload
        store.put_stream("big/empty", io.BytesIO(b""))
        assert store.get("big/empty") == b""
        assert store.reader("big/missing") is None

    def test_read_range_slices_and_stops_at_the_end(self, store: ObjectStore) -> None:
        store.put("r/x", b"0123456789")
        assert store.read_range("r/x", 0, 4) == b"0123"
        assert store.read_range("r/x", 7, 100) == b"789"
        assert store.read_range("r/x", 10, 5) == b""
        assert store.read_range("r/x", 3, 0) == b""
        assert store.read_range("r/missing", 0, 4) is None
        with pytest.raises(ValueError):
            store.read_range("r/x", -1, 4)

    def test_a_stream_that_fails_midway_leaves_the_old_object(self, store: ObjectStore) -> None:
        store.put("s/page", b"old")

        class Broken(io.RawIOBase):
            sent = False

            def readable(self) -> bool:
                return True

            def readinto(self, buffer: Any) -> int:
                if self.sent:
                    raise ConnectionError("source went away")
                self.sent = True
                buffer[:3] = b"new"
                return 3

        with pytest.raises(ConnectionError):
            store.put_stream("s/page", io.BufferedReader(Broken()))
        assert store.get("s/page") == b"old"
        assert store.list("s/") == ["s/page"]

    @pytest.mark.parametrize("key", INVALID_KEYS)
    def test_invalid_keys_rejected_everywhere(self, store: ObjectStore, key: str) -> None:
        for call in (
            lambda: store.put(key, b"x"),
            lambda: store.get(key),
            lambda: store.delete(key),
            lambda: store.exists(key),
            lambda: store.put_stream(key, io.BytesIO(b"x")),
            lambda: store.reader(key),
            lambda: store.read_range(key, 0, 1),
        ):
            with pytest.raises(InvalidObjectKey):
                call()
        assert store.list("") == []

    @pytest.mark.parametrize("prefix", ["/", "../", "a//", "%2e%2e/", "a\\", "a/../"])
    def test_invalid_prefixes_rejected(self, store: ObjectStore, prefix: str) -> None:
        with pytest.raises(InvalidObjectKey):
            store.list(prefix)

    def test_tenant_isolation(self, store: ObjectStore) -> None:
        alpha, beta = TenantStore(store, "alpha"), TenantStore(store, "beta")
        alpha.put("site/index.html", b"alpha")
        beta.put("site/secret.txt", b"beta")
        assert alpha.get("site/index.html") == b"alpha"
        assert alpha.get("site/secret.txt") is None
        assert not alpha.exists("site/secret.txt")
        assert alpha.delete("site/secret.txt") is False
        assert alpha.list("") == ["site/index.html"]
        assert beta.list("site/") == ["site/secret.txt"]
        # Spelling the other tenant's full key only reaches a path inside alpha's own prefix.
        assert alpha.get("tenants/beta/site/secret.txt") is None
        assert store.list("") == ["tenants/alpha/site/index.html", "tenants/beta/site/secret.txt"]

    @pytest.mark.parametrize("key", ["../beta/x", "../../tenants/beta/x", "a/../../beta/x", "/tenants/beta/x"])
    def test_tenant_traversal_rejected_and_nothing_written(self, store: ObjectStore, key: str) -> None:
        beta = TenantStore(store, "beta")
        beta.put("x", b"beta's")
        alpha = TenantStore(store, "alpha")
        with pytest.raises(InvalidObjectKey):
            alpha.put(key, b"evil")
        with pytest.raises(InvalidObjectKey):
            alpha.get(key)
        with pytest.raises(InvalidObjectKey):
            alpha.delete(key)
        with pytest.raises(InvalidObjectKey):
            alpha.list("../")
        assert store.list("") == ["tenants/beta/x"]
        assert beta.get("x") == b"beta's"


def _memory_store(tmp_path: Path) -> ObjectStore:
    return MemoryStore()


def _filesystem_store(tmp_path: Path) -> ObjectStore:
    return FilesystemStore(tmp_path / "objects")


class TestLocalAdapters(ObjectStoreContract):
    """The contract on the memory twin and the filesystem adapter."""

    @pytest.fixture(params=[_memory_store, _filesystem_store], ids=["memory", "filesystem"])
    def store(self, request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
        factory: Callable[[Path], ObjectStore] = request.param
        return factory(tmp_path)


# --- key rules -------------------------------------------------------------------------------


@pytest.mark.parametrize("key", VALID_KEYS)
def test_validate_key_accepts_and_returns_unchanged(key: str) -> None:
    assert validate_key(key) is key


@pytest.mark.parametrize("key", INVALID_KEYS)
def test_validate_key_rejects(key: str) -> None:
    with pytest.raises(InvalidObjectKey) as caught:
        validate_key(key)
    assert caught.value.code == "invalid_object_key"
    assert caught.value.status == 400
    assert caught.value.details["reason"]


def test_validate_key_rejects_non_strings() -> None:
    with pytest.raises(InvalidObjectKey):
        validate_key(None)  # type: ignore[arg-type]
    with pytest.raises(InvalidObjectKey):
        validate_key(b"a")  # type: ignore[arg-type]


def test_validate_key_details_do_not_echo_huge_keys() -> None:
    with pytest.raises(InvalidObjectKey) as caught:
        validate_key("x" * 100_000)
    assert caught.value.details["reason"] == "too_long"
    assert len(caught.value.details["key"]) <= 100


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("", "empty"),
        ("/a", "absolute"),
        ("a\\b", "backslash"),
        ("a\x00", "control_character"),
        ("a//b", "bad_segment"),
        ("%2e%2e", "bad_character"),
    ],
)
def test_validate_key_reasons(key: str, reason: str) -> None:
    with pytest.raises(InvalidObjectKey) as caught:
        validate_key(key)
    assert caught.value.details["reason"] == reason


@pytest.mark.parametrize("prefix", ["", "a", "a/", "a/b", "a/b/", "tenants/acme/"])
def test_validate_prefix_accepts(prefix: str) -> None:
    assert validate_prefix(prefix) == prefix


# --- memory twin -----------------------------------------------------------------------------


def test_memory_counts_writes_and_deletes_per_key() -> None:
    store = MemoryStore()
    store.put("a", b"1")
    store.put("a", b"2")
    store.put("b", b"1")
    store.delete("a")
    store.delete("missing")
    assert store.writes == {"a": 2, "b": 1}
    assert store.deletes == {"a": 1, "missing": 1}


def test_memory_keeps_content_type() -> None:
    store = MemoryStore()
    store.put("page.html", b"<p>", content_type="text/html")
    assert store.content_type("page.html") == "text/html"
    assert store.content_type("other") is None


def test_memory_fail_next_default_error_then_recovers() -> None:
    store = MemoryStore()
    store.put("a", b"1")
    store.fail_next(3)
    with pytest.raises(ConnectionError, match="injected"):
        store.put("a", b"2")
    with pytest.raises(ConnectionError):
        store.get("a")
    with pytest.raises(ConnectionError):
        store.delete("a")
    assert store.get("a") == b"1"
    assert store.writes == {"a": 1}
    assert store.deletes == {}


def test_memory_fail_next_custom_exception_and_count() -> None:
    store = MemoryStore()
    boom = TimeoutError("slow disk")
    store.fail_next(1, boom)
    with pytest.raises(TimeoutError) as caught:
        store.put("a", b"1")
    assert caught.value is boom
    store.put("a", b"1")
    assert store.get("a") == b"1"


def test_memory_faults_skip_exists_and_list_and_bad_keys() -> None:
    store = MemoryStore()
    store.fail_next(1)
    assert store.exists("a") is False
    assert store.list("") == []
    with pytest.raises(InvalidObjectKey):
        store.put("../a", b"x")
    with pytest.raises(ConnectionError):
        store.get("a")


def test_memory_fail_next_rejects_negative() -> None:
    with pytest.raises(ValueError):
        MemoryStore().fail_next(-1)


def test_memory_is_thread_safe() -> None:
    store = MemoryStore()

    def writer(worker: int) -> None:
        for i in range(200):
            store.put(f"w{worker}/{i % 10}", b"x")
            store.put("shared", b"y")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert store.writes["shared"] == 8 * 200
    assert sum(store.writes.values()) == 2 * 8 * 200
    assert len(store.list("")) == 8 * 10 + 1


# --- filesystem adapter ----------------------------------------------------------------------


def test_filesystem_maps_keys_to_files(tmp_path: Path) -> None:
    store = FilesystemStore(tmp_path)
    store.put("a/b/c.txt", b"hello")
    assert (tmp_path / "a" / "b" / "c.txt").read_bytes() == b"hello"
    assert FilesystemStore(tmp_path).get("a/b/c.txt") == b"hello"


def test_filesystem_leaves_no_temp_files_and_ignores_strays(tmp_path: Path) -> None:
    store = FilesystemStore(tmp_path)
    store.put("d/x", b"1")
    store.put("d/x", b"2")
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["x"]
    (tmp_path / "d" / ".x.abc.%tmp").write_bytes(b"half-written")
    (tmp_path / "d" / "bad name").write_bytes(b"not a key")
    assert store.list("") == ["d/x"]


def test_filesystem_failed_replace_keeps_old_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = FilesystemStore(tmp_path)
    store.put("doc", b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        store.put("doc", b"new")
    monkeypatch.undo()
    assert store.get("doc") == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["doc"]


def test_filesystem_files_are_readable(tmp_path: Path) -> None:
    store = FilesystemStore(tmp_path)
    store.put("public/page.html", b"x")
    assert (tmp_path / "public" / "page.html").stat().st_mode & 0o777 == 0o644


def test_filesystem_delete_prunes_empty_directories(tmp_path: Path) -> None:
    store = FilesystemStore(tmp_path / "root")
    store.put("a/b/c", b"1")
    store.put("a/keep", b"2")
    assert store.delete("a/b/c")
    assert not (tmp_path / "root" / "a" / "b").exists()
    assert (tmp_path / "root" / "a" / "keep").exists()
    # With 'a/b' pruned, the name is free for an object again.
    store.put("a/b", b"3")
    assert store.list("a/") == ["a/b", "a/keep"]
    assert (tmp_path / "root").is_dir()


def test_filesystem_object_and_prefix_conflict_is_invalid_key(tmp_path: Path) -> None:
    store = FilesystemStore(tmp_path)
    store.put("a", b"file")
    with pytest.raises(InvalidObjectKey) as caught:
        store.put("a/b", b"nested")
    assert caught.value.details["reason"] == "path_conflict"
    store.put("x/y", b"nested")
    with pytest.raises(InvalidObjectKey):
        store.put("x", b"file")
    assert store.get("a/b") is None
    assert store.get("x") is None
    assert store.exists("x") is False
    assert store.delete("x") is False
    assert store.list("") == ["a", "x/y"]


def test_filesystem_refuses_symlink_escape(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_bytes(b"secret")
    store = FilesystemStore(root)
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "filelink").symlink_to(outside / "secret")
    with pytest.raises(InvalidObjectKey) as caught:
        store.get("link/secret")
    assert caught.value.details["reason"] == "outside_root"
    with pytest.raises(InvalidObjectKey):
        store.put("link/new", b"x")
    with pytest.raises(InvalidObjectKey):
        store.get("filelink")
    assert not (outside / "new").exists()
    assert store.list("") == []
    assert store.list("link/") == []


# --- tenant view -----------------------------------------------------------------------------


def test_tenant_view_prefix_and_keys_on_the_shared_store() -> None:
    shared = MemoryStore()
    view = TenantStore(shared, "acme-news")
    assert view.prefix == "tenants/acme-news/"
    assert view.tenant == "acme-news"
    view.put("site/a.css", b"x", content_type="text/css")
    assert shared.writes == {"tenants/acme-news/site/a.css": 1}
    assert shared.content_type("tenants/acme-news/site/a.css") == "text/css"
    assert isinstance(view, ObjectStore)


def test_tenant_view_rejected_key_never_reaches_store() -> None:
    shared = MemoryStore()
    view = TenantStore(shared, "alpha")
    with pytest.raises(InvalidObjectKey):
        view.put("../beta/x", b"evil")
    with pytest.raises(InvalidObjectKey):
        view.delete("../beta/x")
    assert shared.writes == {}
    assert shared.deletes == {}


class RecordingStore:
    """Accepts any key and records every call: shows what the view lets through, with no second check."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        self.calls.append(("put", key))

    def get(self, key: str) -> bytes | None:
        self.calls.append(("get", key))
        return None

    def delete(self, key: str) -> bool:
        self.calls.append(("delete", key))
        return False

    def exists(self, key: str) -> bool:
        self.calls.append(("exists", key))
        return False

    def list(self, prefix: str = "") -> list[str]:
        self.calls.append(("list", prefix))
        return []


@pytest.mark.parametrize("key", ["../beta/x", "a/../../beta/x", "/x", "", "a//b", "%2e%2e/beta/x"])
def test_tenant_view_validates_before_delegating(key: str) -> None:
    recorder = RecordingStore()
    view = TenantStore(recorder, "alpha")
    for call in (
        lambda: view.put(key, b"evil"),
        lambda: view.get(key),
        lambda: view.delete(key),
        lambda: view.exists(key),
    ):
        with pytest.raises(InvalidObjectKey) as caught:
            call()
        # The error names the key the caller gave, not the tenant-prefixed one.
        assert caught.value.details["key"] == key[:100]
    with pytest.raises(InvalidObjectKey):
        view.list("../")
    assert recorder.calls == []
    view.put("ok", b"fine")
    view.list("sub/")
    assert recorder.calls == [("put", "tenants/alpha/ok"), ("list", "tenants/alpha/sub/")]


@pytest.mark.parametrize("slug", ["", "a", "A", "Acme", "1abc", "-abc", "a_b", "a.b", "a/b", "../x", "a" * 40, "ab\n"])
def test_tenant_view_rejects_bad_slugs(slug: str) -> None:
    with pytest.raises(InvalidSlug):
        TenantStore(MemoryStore(), slug)


@pytest.mark.parametrize("slug", ["ab", "acme", "acme-news", "a1", "a" * 39])
def test_tenant_view_accepts_good_slugs(slug: str) -> None:
    assert TenantStore(MemoryStore(), slug).prefix == f"tenants/{slug}/"


# --- settings and factory --------------------------------------------------------------------


def test_settings_default_to_filesystem_under_data_dir(tmp_path: Path) -> None:
    settings = RuntimeSettings.from_env({"PRESSROOM_DATA_DIR": str(tmp_path)}).storage
    assert settings.kind == "filesystem"
    assert settings.root == tmp_path.resolve() / "objects"
    store = build_object_store(settings)
    assert isinstance(store, FilesystemStore)
    assert store.root == (tmp_path / "objects").resolve()


def test_settings_read_s3_variables(tmp_path: Path) -> None:
    env = {
        "PRESSROOM_OBJECT_STORE": "s3",
        "PRESSROOM_S3_BUCKET": "pressroom-objects",
        "PRESSROOM_S3_ENDPOINT_URL": "http://127.0.0.1:8333",
        "PRESSROOM_S3_REGION": "eu-west-1",
        "PRESSROOM_S3_ACCESS_KEY": "AKIDEXAMPLE",
        "PRESSROOM_S3_SECRET_KEY": "super-secret-value",
    }
    settings = StorageSettings.from_env(env)
    assert settings == StorageSettings(
        kind="s3",
        s3_bucket="pressroom-objects",
        s3_endpoint_url="http://127.0.0.1:8333",
        s3_region="eu-west-1",
        s3_access_key="AKIDEXAMPLE",
        s3_secret_key="super-secret-value",
    )
    assert "super-secret-value" not in repr(settings)
    assert "super-secret-value" not in str(settings)
    store = build_object_store(settings)
    assert isinstance(store, S3Store)
    assert store.bucket == "pressroom-objects"
    assert "super-secret-value" not in repr(store)


@pytest.mark.parametrize(
    ("env", "variable"),
    [
        ({"PRESSROOM_OBJECT_STORE": "gcs"}, "PRESSROOM_OBJECT_STORE"),
        ({"PRESSROOM_OBJECT_STORE": "s3"}, "PRESSROOM_S3_BUCKET"),
        ({"PRESSROOM_OBJECT_STORE": "s3", "PRESSROOM_S3_BUCKET": ""}, "PRESSROOM_S3_BUCKET"),
        (
            {"PRESSROOM_OBJECT_STORE": "s3", "PRESSROOM_S3_BUCKET": "b", "PRESSROOM_S3_ENDPOINT_URL": "127.0.0.1:8333"},
            "PRESSROOM_S3_ENDPOINT_URL",
        ),
        (
            {"PRESSROOM_OBJECT_STORE": "s3", "PRESSROOM_S3_BUCKET": "b", "PRESSROOM_S3_ACCESS_KEY": "id"},
            "PRESSROOM_S3_SECRET_KEY",
        ),
    ],
)
def test_settings_reject_bad_values_naming_the_variable(tmp_path: Path, env: dict[str, str], variable: str) -> None:
    with pytest.raises(SettingsError, match=variable) as refused:
        StorageSettings.from_env(env)
    assert "super-secret" not in str(refused.value)


def test_settings_kind_is_case_insensitive(tmp_path: Path) -> None:
    env = {"PRESSROOM_OBJECT_STORE": " S3 ", "PRESSROOM_S3_BUCKET": "b"}
    assert StorageSettings.from_env(env).kind == "s3"


def test_settings_refuse_an_unknown_kind_and_a_bucketless_s3(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="PRESSROOM_OBJECT_STORE"):
        StorageSettings.from_env({"PRESSROOM_OBJECT_STORE": "ftp"})
    with pytest.raises(SettingsError, match="PRESSROOM_S3_BUCKET"):
        StorageSettings.from_env({"PRESSROOM_OBJECT_STORE": "s3"})
    with pytest.raises(ValueError, match="root directory"):
        build_object_store(StorageSettings.from_env({}))


def test_s3_client_is_configured_for_self_hosted_endpoints() -> None:
    store = S3Store("b", endpoint_url="http://127.0.0.1:1", access_key="id", secret_key="secret")
    config = store.client.meta.config
    assert config.s3["addressing_style"] == "path"
    assert config.signature_version == "s3v4"
    # botocore turns {"max_attempts": 3} into three retries after the first try.
    assert config.retries == {"total_max_attempts": 4, "mode": "standard"}
    assert 0 < config.connect_timeout <= 10
    assert 0 < config.read_timeout <= 60
    assert store.client.meta.endpoint_url == "http://127.0.0.1:1"
    assert store.client.meta.region_name == "us-east-1"


def test_s3_store_validates_keys_before_any_request() -> None:
    class ExplodingClient:
        def __getattr__(self, name: str) -> None:
            raise AssertionError(f"client.{name} must not be reached")

    store = S3Store("b", client=ExplodingClient())
    for call in (lambda: store.put("../x", b""), lambda: store.get("a//b"), lambda: store.delete("/x")):
        with pytest.raises(InvalidObjectKey):
            call()
    with pytest.raises(InvalidObjectKey):
        store.list("../")


def test_package_exports_are_importable_and_complete() -> None:
    assert sorted(storage.__all__) == sorted(set(storage.__all__))
    for name in storage.__all__:
        assert getattr(storage, name) is not None
    public = {"ObjectStore", "MemoryStore", "FilesystemStore", "S3Store", "TenantStore", "StorageSettings"}
    assert public <= set(storage.__all__)
    assert {"validate_key", "build_object_store"} <= set(storage.__all__)
