"""Settings of the tenant runtime, read once from the environment at start-up."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tenant_runtime.storage.factory import StorageSettings


@dataclass(frozen=True)
class RuntimeSettings:
    """Where tenant workspaces live and how their objects and caches are reached."""

    data_dir: Path = Path("data")
    storage: StorageSettings = field(default_factory=StorageSettings)
    site_url: str = "http://127.0.0.1:8080"
    # Where the public site server (or Varnish) accepts PURGE requests; None = no edge cache.
    purge_url: str | None = None
    purge_secret: str = ""
    sqlite_busy_timeout_ms: int = 10_000
    # How long an aggregates step waits for the rest of a burst of publishes before deciding.
    aggregate_settle_seconds: float = 0.5

    @property
    def tenants_dir(self) -> Path:
        return self.data_dir / "tenants"

    def workspace_path(self, tenant: str) -> Path:
        return self.tenants_dir / tenant / "workspace.db"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> RuntimeSettings:
        env = os.environ if environ is None else environ
        data_dir = Path(env.get("PRESSROOM_DATA_DIR", "data")).resolve()
        busy = env.get("PRESSROOM_SQLITE_BUSY_TIMEOUT_MS", "10000")
        if not busy.isdigit():
            raise ValueError(f"PRESSROOM_SQLITE_BUSY_TIMEOUT_MS must be an integer, got {busy!r}")
        settle = env.get("PRESSROOM_AGGREGATE_SETTLE_SECONDS", "0.5")
        try:
            settle_seconds = float(settle)
        except ValueError:
            raise ValueError(f"PRESSROOM_AGGREGATE_SETTLE_SECONDS must be a number, got {settle!r}") from None
        if not 0 <= settle_seconds <= 60:
            raise ValueError(f"PRESSROOM_AGGREGATE_SETTLE_SECONDS must be 0-60, got {settle!r}")
        return cls(
            data_dir=data_dir,
            storage=StorageSettings.from_env(env, data_dir),
            site_url=env.get("PRESSROOM_SITE_URL", "http://127.0.0.1:8080").rstrip("/"),
            purge_url=env.get("PRESSROOM_PURGE_URL") or None,
            purge_secret=env.get("PRESSROOM_PURGE_SECRET", ""),
            sqlite_busy_timeout_ms=int(busy),
            aggregate_settle_seconds=settle_seconds,
        )
