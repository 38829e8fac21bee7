"""Settings of the tenant runtime: where tenant workspaces live and how their objects and caches are reached."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from tenant_runtime.config import PressroomSettings
from tenant_runtime.storage.factory import StorageSettings


class RuntimeSettings(PressroomSettings):
    """``PRESSROOM_DATA_DIR``, ``PRESSROOM_SITE_URL``, ``PRESSROOM_PURGE_*``, ``PRESSROOM_SQLITE_BUSY_TIMEOUT_MS``,
    ``PRESSROOM_SQLITE_WARM_TENANTS``, ``PRESSROOM_SQLITE_CHECKPOINT_INTERVAL_SECONDS``,
    ``PRESSROOM_AGGREGATE_SETTLE_SECONDS`` / ``_SETTLE_LONE``,
    ``PRESSROOM_WORKSPACE_BACKEND`` / ``PRESSROOM_WORKSPACE_DATABASE_URL``, ``PRESSROOM_WEBHOOK_ALLOW_PRIVATE``,
    and the object store's own settings.

    The workspace backend is chosen per shard (each runtime process reads its own environment):
    ``sqlite`` (default) keeps each tenant's workspace in ``tenants/{slug}/workspace.db``;
    ``postgresql`` keeps it in schema ``ws_{slug}`` (``-`` as ``_``) of the database at
    ``workspace_database_url``, which must not be the control plane's database.
    """

    data_dir: Path = Path("data")
    storage: StorageSettings = Field(default_factory=StorageSettings)
    site_url: str = "http://127.0.0.1:8080"
    # Where the public site server (or Varnish) accepts PURGE requests; None = no edge cache.
    purge_url: str | None = None
    purge_secret: SecretStr = SecretStr("")
    sqlite_busy_timeout_ms: int = Field(10_000, ge=0, le=600_000)
    # How many tenants' SQLite connections a process keeps open between units of work (the most recently
    # used ones; tenant_runtime/workspace/open.py). 0: a connection per unit of work, closed after it.
    sqlite_warm_tenants: int = Field(64, ge=0, le=10_000)
    # How often a thread checkpoints the WAL of the warm tenants written since its last pass, so no request's
    # COMMIT pays for one (tenant_runtime/workspace/checkpoints.py). 0: SQLite's own automatic checkpoint, in
    # the COMMIT that takes the WAL past 1,000 pages.
    sqlite_checkpoint_interval_seconds: float = Field(1.0, ge=0, le=3600)
    # How long an aggregates step waits for the rest of a burst of publishes before deciding: only while
    # another delivery of the tenant is due (a lone publish decides at once), unless aggregate_settle_lone.
    aggregate_settle_seconds: float = Field(0.5, ge=0, le=60)
    aggregate_settle_lone: bool = False
    # Whether plugin webhooks may be delivered to private, loopback or link-local addresses (a site owner
    # chooses the URL: on a shared platform that would reach the platform's own services). Off by default.
    webhook_allow_private: bool = False
    workspace_backend: Literal["sqlite", "postgresql"] = "sqlite"
    # A secret: a DSN usually carries the runtime's password.
    workspace_database_url: SecretStr | None = None

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.resolve()

    @field_validator("site_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @model_validator(mode="after")
    def _workspace_database(self) -> RuntimeSettings:
        url = self.workspace_database_url.get_secret_value() if self.workspace_database_url else ""
        if self.workspace_backend == "postgresql" and not url.startswith(("postgresql://", "postgresql+psycopg://")):
            raise ValueError(
                "PRESSROOM_WORKSPACE_BACKEND=postgresql needs PRESSROOM_WORKSPACE_DATABASE_URL=postgresql://..."
            )
        return self

    @property
    def postgres_workspaces(self) -> bool:
        return self.workspace_backend == "postgresql"

    @model_validator(mode="after")
    def _objects_under_data(self) -> RuntimeSettings:
        if self.storage.root is None:
            # Frozen: the storage settings are replaced, once, while the object is being built.
            object.__setattr__(self, "storage", self.storage.model_copy(update={"root": self.data_dir / "objects"}))
        return self

    @property
    def tenants_dir(self) -> Path:
        return self.data_dir / "tenants"

    def workspace_path(self, tenant: str) -> Path:
        return self.tenants_dir / tenant / "workspace.db"


__all__ = ["RuntimeSettings"]
