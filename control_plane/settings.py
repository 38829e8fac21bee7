"""Settings of the control plane, and the bundle of every area's settings read once at start-up."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import NoDecode

from dispatch.settings import DispatchSettings
from tenant_runtime.config import PressroomSettings
from tenant_runtime.settings import RuntimeSettings

Port = Annotated[int, Field(gt=0, lt=65536)]
MIN_SESSION_SECRET = 16


SHARD_NAME = r"^[a-z][a-z0-9-]{0,38}$"


class ShardTarget(BaseModel):
    """Where a shard's runtime is: ``url`` None runs it in this process (the embedded stack)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str | None = None
    secret: SecretStr | None = None

    @field_validator("url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"a shard's url must be http(s), got {value!r}")
        return value.rstrip("/") if value is not None else None

    @model_validator(mode="after")
    def _credential(self) -> ShardTarget:
        if self.url is not None and (self.secret is None or len(self.secret.get_secret_value()) < MIN_SESSION_SECRET):
            raise ValueError(f"a remote shard needs a secret of at least {MIN_SESSION_SECRET} characters")
        return self


class ControlPlaneSettings(PressroomSettings):
    # None: SQLite in the data directory (``control-plane.db``); ``postgresql://…`` at scale.
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: Port = 8000
    site_host: str = "127.0.0.1"
    site_port: Port = 8080
    prefect_port: Port = 4200  # the local Prefect server of `pressroom up`
    operator_token: SecretStr | None = None
    max_body_bytes: int = Field(2_000_000, ge=1024, le=1_000_000_000)
    # The request cap of a media upload (whole multipart body), above every tenant's own media limit.
    media_max_body_bytes: int = Field(64 * 1024 * 1024, ge=1024, le=1_100_000_000)
    default_publishes_per_hour: int = Field(600, ge=0, le=1_000_000, validation_alias="PRESSROOM_PUBLISHES_PER_HOUR")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    log_format: Literal["json", "console"] = "json"
    migrate_on_start: bool = True
    site_cache: bool = True
    purge_networks: Annotated[tuple[str, ...], NoDecode] = Field(
        ("127.0.0.0/8", "::1/128"), validation_alias="PRESSROOM_PURGE_ALLOW"
    )
    # Dashboard cookies: encrypted under this secret (random per process when unset), Secure behind TLS.
    session_secret: SecretStr | None = None
    session_cookie_secure: bool = False
    # The site server's read-only view of each shard's data directory (comma-separated); empty: the data dir.
    site_data_dirs: Annotated[tuple[Path, ...], NoDecode] = ()
    # And of each shard whose workspaces are on PostgreSQL: its workspace database's URL (comma-separated),
    # for a read-only role (SELECT on the ws_ schemas): the site only ever reads.
    site_workspace_databases: Annotated[tuple[SecretStr, ...], NoDecode] = ()
    # Tenant runtimes by shard (JSON: {"name": {"url", "secret"}}); a shard without url runs in this process.
    shards: dict[str, ShardTarget] = Field(default_factory=lambda: {"default": ShardTarget()})
    default_shard: str = "default"  # where new tenants are placed
    runtime_timeout_seconds: float = Field(30.0, gt=0, le=600)
    # How long a move waits for the tenant's commands and runs in flight before calling itself off.
    move_drain_seconds: float = Field(60.0, gt=0, le=600)
    # GET /metrics: a scrape token Prometheus holds instead of an operator token (an operator token works too).
    metrics_token: SecretStr | None = None
    # A scrape refreshes the operation figures of at most this many tenants (the longest unrefreshed first);
    # the others keep their last figures, so 10,000 tenants never mean 10,000 workspaces opened per scrape.
    metrics_tenants_per_scrape: int = Field(100, ge=0, le=10_000)
    metrics_timeout_seconds: float = Field(5.0, gt=0, le=60)  # Prefect's and each shard's share of a scrape
    # install_package from a URL: only these hosts (comma-separated; "example.com" allows its subdomains, "*"
    # any public host; empty: no URL installs), private addresses only when allowed, within this time.
    package_fetch_allow: Annotated[tuple[str, ...], NoDecode] = ()
    package_fetch_allow_private: bool = False
    package_fetch_timeout_seconds: float = Field(10.0, gt=0, le=120)

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @field_validator("purge_networks", mode="before")
    @classmethod
    def _networks(cls, value: object) -> object:
        parts = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) else value
        for network in parts if isinstance(parts, list | tuple) else ():
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ValueError(f"must be comma-separated CIDR networks, got {network!r}") from None
        return tuple(parts) if isinstance(parts, list) else parts

    @field_validator("package_fetch_allow", mode="before")
    @classmethod
    def _hosts(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip().lower() for part in value.split(",") if part.strip())
        return value

    @field_validator("site_data_dirs", mode="before")
    @classmethod
    def _paths(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(Path(p.strip()) for p in value.split(",") if p.strip())
        return value

    @field_validator("site_workspace_databases", mode="before")
    @classmethod
    def _urls(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(p.strip() for p in value.split(",") if p.strip())
        return value

    @field_validator("session_secret", "metrics_token")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_SESSION_SECRET:
            raise ValueError(f"must be at least {MIN_SESSION_SECRET} characters")
        return value

    @field_validator("shards")
    @classmethod
    def _shard_names(cls, value: dict[str, ShardTarget]) -> dict[str, ShardTarget]:
        import re

        if not value:
            raise ValueError("at least one shard is needed")
        for name in value:
            if not re.match(SHARD_NAME, name):
                raise ValueError(f"shard names match {SHARD_NAME}, got {name!r}")
        if sum(1 for target in value.values() if target.url is None) > 1:
            raise ValueError("at most one shard runs in this process (the others need a url)")
        return value

    @model_validator(mode="after")
    def _default_shard_known(self) -> ControlPlaneSettings:
        if self.default_shard not in self.shards:
            raise ValueError(f"PRESSROOM_DEFAULT_SHARD: {self.default_shard!r} is not one of PRESSROOM_SHARDS")
        return self

    @property
    def log_json(self) -> bool:
        return self.log_format == "json"

    @property
    def public_url(self) -> str:
        return f"http://{self.host}:{self.port}"


@dataclass(frozen=True)
class Settings:
    """Every area's settings, read once at start-up."""

    runtime: RuntimeSettings
    dispatch: DispatchSettings
    control_plane: ControlPlaneSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Each area from the same environment; the first malformed value stops start-up, naming it."""
        return cls(
            runtime=RuntimeSettings.from_env(environ),
            dispatch=DispatchSettings.from_env(environ),
            control_plane=ControlPlaneSettings.from_env(environ),
        )

    @property
    def database_url(self) -> str:
        """The control-plane database (SQLite in the data directory unless ``PRESSROOM_DATABASE_URL`` says)."""
        url = self.control_plane.database_url
        return url if url is not None else f"sqlite:///{self.runtime.data_dir / 'control-plane.db'}"


__all__ = ["ControlPlaneSettings", "Settings", "ShardTarget"]
