"""Object-store settings (``PRESSROOM_OBJECT_STORE``, ``PRESSROOM_S3_*``) and the adapter they select."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from tenant_runtime.config import PressroomSettings
from tenant_runtime.storage.base import ObjectStore
from tenant_runtime.storage.filesystem import FilesystemStore
from tenant_runtime.storage.s3 import S3Store

KINDS = ("filesystem", "s3")


class StorageSettings(PressroomSettings):
    """Which object store to use and how to reach it; the secret key is a SecretStr."""

    kind: Literal["filesystem", "s3"] = Field("filesystem", validation_alias="PRESSROOM_OBJECT_STORE")
    # Where the filesystem store keeps objects; None: ``objects/`` under the data directory.
    root: Path | None = Field(None, validation_alias="PRESSROOM_OBJECTS_DIR")
    s3_bucket: str | None = None
    s3_endpoint_url: str | None = None
    s3_region: str = "us-east-1"
    s3_access_key: str | None = None
    s3_secret_key: SecretStr | None = None

    @field_validator("kind", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("s3_endpoint_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"must be an http(s) URL, got {value!r}")
        return value

    @model_validator(mode="after")
    def _s3_complete(self) -> StorageSettings:
        if self.kind == "s3" and not self.s3_bucket:
            raise ValueError("PRESSROOM_S3_BUCKET is required when PRESSROOM_OBJECT_STORE=s3")
        # One without the other would only fail at the first request, far from start-up.
        if (self.s3_access_key is None) != (self.s3_secret_key is None):
            raise ValueError("PRESSROOM_S3_ACCESS_KEY and PRESSROOM_S3_SECRET_KEY must be set together")
        return self


def build_object_store(settings: StorageSettings) -> ObjectStore:
    """The adapter ``settings.kind`` names."""
    if settings.kind == "s3":
        assert settings.s3_bucket is not None  # checked by the settings
        secret = settings.s3_secret_key.get_secret_value() if settings.s3_secret_key is not None else None
        return S3Store(
            settings.s3_bucket,
            endpoint_url=settings.s3_endpoint_url,
            region=settings.s3_region,
            access_key=settings.s3_access_key,
            secret_key=secret,
        )
    if settings.root is None:
        raise ValueError("the filesystem object store needs a root directory")
    return FilesystemStore(settings.root)


__all__ = ["KINDS", "StorageSettings", "build_object_store"]
