"""``S3Store``: the object store on any S3-compatible service (AWS S3, SeaweedFS, MinIO)."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

from tenant_runtime.storage.base import Readable, check_range, validate_key, validate_prefix

# HEAD answers carry no body, so a missing object shows up only as a bare status code.
_MISSING_CODES = frozenset({"NoSuchKey", "404", "NotFound"})
_OWNED_BUCKET_CODES = frozenset({"BucketAlreadyOwnedByYou"})


def _error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def client_config(*, connect_timeout: float = 5.0, read_timeout: float = 30.0) -> Config:
    """Path-style SigV4 with bounded timeouts and botocore's standard retries."""
    # Path-style addressing works with self-hosted endpoints that have no wildcard DNS for buckets.
    return Config(
        signature_version="s3v4",
        s3={"addressing_style": "path"},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        retries={"max_attempts": 3, "mode": "standard"},
    )


class S3Store:
    """Objects in one bucket; keys are validated before any request is sent."""

    def __init__(
        self,
        bucket: str,
        *,
        endpoint_url: str | None = None,
        region: str = "us-east-1",
        access_key: str | None = None,
        secret_key: str | None = None,
        client: Any = None,
        create_bucket: bool = False,
        page_size: int = 1000,
    ) -> None:
        if not bucket:
            raise ValueError("S3Store needs a bucket name")
        if not 1 <= page_size <= 1000:
            raise ValueError("page_size must be between 1 and 1000")
        self.bucket = bucket
        self.endpoint_url = endpoint_url
        self.region = region
        self.page_size = page_size
        self.client: Any = client or boto3.client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region,
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            config=client_config(),
        )
        if create_bucket:
            self.ensure_bucket()

    def __repr__(self) -> str:
        return f"S3Store(bucket={self.bucket!r}, endpoint_url={self.endpoint_url!r}, region={self.region!r})"

    def ensure_bucket(self) -> None:
        """Create the bucket unless this account already owns it."""
        kwargs: dict[str, Any] = {"Bucket": self.bucket}
        # us-east-1 is the one region S3 rejects as an explicit location constraint.
        if self.region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": self.region}
        try:
            self.client.create_bucket(**kwargs)
        except ClientError as exc:
            if _error_code(exc) not in _OWNED_BUCKET_CODES:
                raise

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        """Upload ``data`` under ``key`` in one request, replacing any previous object."""
        validate_key(key)
        self.client.put_object(Bucket=self.bucket, Key=key, Body=bytes(data), ContentType=content_type)

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or ``None`` when the key is missing (a missing bucket still raises)."""
        validate_key(key)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None
            raise
        body = response["Body"]
        try:
            return body.read()
        finally:
            body.close()

    def put_stream(self, key: str, source: Readable, *, content_type: str = "application/octet-stream") -> None:
        """Upload ``source`` in parts (multipart above boto3's threshold): nothing shows until it completes."""
        validate_key(key)
        self.client.upload_fileobj(source, self.bucket, key, ExtraArgs={"ContentType": content_type})

    def reader(self, key: str) -> Readable | None:
        """The object's body, read as it arrives, or ``None`` when the key is missing."""
        validate_key(key)
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None
            raise
        body: Readable = response["Body"]
        return body

    def read_range(self, key: str, offset: int, length: int) -> bytes | None:
        """One ranged GET; ``None`` when the key is missing."""
        check_range(offset, length)
        validate_key(key)
        if length == 0:
            return b"" if self.exists(key) else None
        span = f"bytes={offset}-{offset + length - 1}"
        try:
            response = self.client.get_object(Bucket=self.bucket, Key=key, Range=span)
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return None
            if _error_code(exc) == "InvalidRange":  # from at or past the end of the object
                return b""
            raise
        body = response["Body"]
        try:
            data: bytes = body.read()
            return data
        finally:
            body.close()

    def delete(self, key: str) -> bool:
        """Remove ``key``; True if an object was there just before."""
        # S3 answers 204 whether or not the key existed, so existence is checked first; a
        # concurrent writer between the two calls can make the answer stale, never the delete wrong.
        if not self.exists(key):
            return False
        self.client.delete_object(Bucket=self.bucket, Key=key)
        return True

    def exists(self, key: str) -> bool:
        """Whether an object is stored under ``key`` (one HEAD request)."""
        validate_key(key)
        try:
            self.client.head_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            if _error_code(exc) in _MISSING_CODES:
                return False
            raise
        return True

    def list(self, prefix: str = "") -> list[str]:
        """Sorted keys starting with ``prefix``, gathered page by page."""
        validate_prefix(prefix)
        paginator = self.client.get_paginator("list_objects_v2")
        pages = paginator.paginate(Bucket=self.bucket, Prefix=prefix, PaginationConfig={"PageSize": self.page_size})
        return sorted(item["Key"] for page in pages for item in page.get("Contents", []))


__all__ = ["S3Store", "client_config"]
