"""``S3Store`` against a real SeaweedFS S3 server: the shared contract plus S3-only behaviour."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tenant_runtime.errors import InvalidObjectKey
from tenant_runtime.storage import ObjectStore, S3Store, TenantStore
from tests.fixtures.s3 import S3Server
from tests.tenant_runtime.test_storage import ObjectStoreContract

pytestmark = pytest.mark.integration


class TestS3Contract(ObjectStoreContract):
    """The same contract the memory twin and filesystem adapter pass."""

    @pytest.fixture
    def store(self, s3_store: S3Store) -> ObjectStore:
        return s3_store


def _store(server: S3Server, bucket: str, **kwargs: Any) -> S3Store:
    return S3Store(
        bucket,
        endpoint_url=server.endpoint_url,
        region=server.region,
        access_key=server.access_key,
        secret_key=server.secret_key,
        **kwargs,
    )


def test_content_type_is_stored(s3_server: S3Server, s3_store: S3Store) -> None:
    s3_store.put("site/index.html", b"<p>", content_type="text/html; charset=utf-8")
    head = s3_server.client().head_object(Bucket=s3_store.bucket, Key="site/index.html")
    assert head["ContentType"] == "text/html; charset=utf-8"


def test_list_follows_pagination(s3_server: S3Server) -> None:
    store = _store(s3_server, s3_server.make_bucket(), page_size=7)
    calls: list[str] = []
    store.client.meta.events.register("before-call.s3.ListObjectsV2", lambda **_: calls.append("list"))
    keys = [f"pages/{i:03d}.html" for i in range(30)]
    for key in reversed(keys):
        store.put(key, key.encode())
    store.put("other/x", b"x")
    assert store.list("pages/") == keys
    # 30 keys at 7 a page take 5 requests; one request would mean the page size was ignored.
    assert len(calls) == 5
    assert store.list("") == ["other/x", *keys]


def test_tenant_isolation_on_one_bucket(s3_server: S3Server, s3_store: S3Store) -> None:
    alpha, beta = TenantStore(s3_store, "alpha"), TenantStore(s3_store, "beta")
    alpha.put("site/index.html", b"alpha")
    beta.put("site/index.html", b"beta")
    assert alpha.get("site/index.html") == b"alpha"
    assert beta.get("site/index.html") == b"beta"
    assert alpha.list("") == ["site/index.html"]
    assert alpha.delete("site/index.html") is True
    assert beta.get("site/index.html") == b"beta"
    raw = s3_server.client().list_objects_v2(Bucket=s3_store.bucket)
    assert [item["Key"] for item in raw.get("Contents", [])] == ["tenants/beta/site/index.html"]


def test_tenant_traversal_never_reaches_the_bucket(s3_server: S3Server, s3_store: S3Store) -> None:
    calls: list[str] = []
    s3_store.client.meta.events.register("before-call.s3", lambda event_name, **_: calls.append(event_name))
    alpha = TenantStore(s3_store, "alpha")
    with pytest.raises(InvalidObjectKey):
        alpha.put("../beta/x", b"evil")
    with pytest.raises(InvalidObjectKey):
        alpha.get("../beta/x")
    assert calls == []
    raw = s3_server.client().list_objects_v2(Bucket=s3_store.bucket)
    assert raw.get("KeyCount", 0) == 0


def test_wrong_secret_is_rejected(s3_server: S3Server, s3_store: S3Store) -> None:
    intruder = S3Store(
        s3_store.bucket,
        endpoint_url=s3_server.endpoint_url,
        access_key=s3_server.access_key,
        secret_key="not-the-secret",
    )
    with pytest.raises(ClientError) as caught:
        intruder.put("x", b"evil")
    assert caught.value.response["Error"]["Code"] in {"SignatureDoesNotMatch", "AccessDenied"}
    with pytest.raises(ClientError):
        intruder.list("")
    assert s3_store.list("") == []


def test_unknown_access_key_is_rejected(s3_server: S3Server, s3_store: S3Store) -> None:
    s3_store.put("x", b"mine")
    intruder = S3Store(s3_store.bucket, endpoint_url=s3_server.endpoint_url, access_key="nobody", secret_key="nothing")
    with pytest.raises(ClientError) as caught:
        intruder.get("x")
    assert caught.value.response["Error"]["Code"] in {"InvalidAccessKeyId", "AccessDenied", "SignatureDoesNotMatch"}


def test_missing_bucket_raises_instead_of_looking_empty(s3_server: S3Server) -> None:
    store = _store(s3_server, "pressroom-test-no-such-bucket")
    with pytest.raises(ClientError) as caught:
        store.get("x")
    assert caught.value.response["Error"]["Code"] == "NoSuchBucket"
    with pytest.raises(ClientError):
        store.list("")


def test_create_bucket_is_idempotent(s3_server: S3Server) -> None:
    name = f"pressroom-test-created-{uuid.uuid4().hex[:12]}"
    with pytest.raises(ClientError):
        s3_server.client().head_bucket(Bucket=name)
    first = _store(s3_server, name, create_bucket=True)
    first.put("k", b"v")
    second = _store(s3_server, name, create_bucket=True)
    assert second.get("k") == b"v"
    s3_server.client().head_bucket(Bucket=name)
