"""Object-store settings, read once from the environment, and the adapter they select."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tenant_runtime.storage.base import ObjectStore
from tenant_runtime.storage.filesystem import FilesystemStore
from tenant_runtime.storage.s3 import S3Store

KINDS = ("filesystem", "s3")


@dataclass(frozen=True)
class StorageSettings:
    """Which object store to use and how to reach it; the secret key never appears in ``repr``."""

    kind: str = "filesystem"
    root: Path = Path("data/objects")
    s3_bucket: str | None = None
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key: str | None = None
    s3_secret_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str], data_dir: Path) -> StorageSettings:
        """Read ``PRESSROOM_OBJECT_STORE`` and ``PRESSROOM_S3_*``; raise ``ValueError`` naming a bad variable."""
        kind = (environ.get("PRESSROOM_OBJECT_STORE") or "filesystem").strip().lower()
        if kind not in KINDS:
            raise ValueError(f"PRESSROOM_OBJECT_STORE must be one of {', '.join(KINDS)}, got {kind!r}")
        bucket = environ.get("PRESSROOM_S3_BUCKET") or None
        endpoint_url = environ.get("PRESSROOM_S3_ENDPOINT_URL") or None
        access_key = environ.get("PRESSROOM_S3_ACCESS_KEY") or None
        secret_key = environ.get("PRESSROOM_S3_SECRET_KEY") or None
        if kind == "s3":
            if bucket is None:
                raise ValueError("PRESSROOM_S3_BUCKET is required when PRESSROOM_OBJECT_STORE=s3")
            if endpoint_url is not None and not endpoint_url.startswith(("http://", "https://")):
                raise ValueError(f"PRESSROOM_S3_ENDPOINT_URL must be an http(s) URL, got {endpoint_url!r}")
            # One without the other would only fail at the first request, far from start-up.
            if (access_key is None) != (secret_key is None):
                raise ValueError("PRESSROOM_S3_ACCESS_KEY and PRESSROOM_S3_SECRET_KEY must be set together")
        return cls(
            kind=kind,
            root=data_dir / "objects",
            s3_bucket=bucket,
            s3_endpoint_url=endpoint_url,
            s3_region=environ.get("PRESSROOM_S3_REGION") or "us-east-1",
            s3_access_key=access_key,
            s3_secret_key=secret_key,
        )


def build_object_store(settings: StorageSettings) -> ObjectStore:
    """The adapter ``settings.kind`` names."""
    if settings.kind == "filesystem":
        return FilesystemStore(settings.root)
    if settings.kind == "s3":
        if not settings.s3_bucket:
            raise ValueError("PRESSROOM_S3_BUCKET is required when PRESSROOM_OBJECT_STORE=s3")
        return S3Store(
            settings.s3_bucket,
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region,
            access_key=settings.s3_access_key,
            secret_key=settings.s3_secret_key,
        )
    raise ValueError(f"PRESSROOM_OBJECT_STORE must be one of {', '.join(KINDS)}, got {settings.kind!r}")


__all__ = ["KINDS", "StorageSettings", "build_object_store"]
