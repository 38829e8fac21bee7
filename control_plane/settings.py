"""Settings of the control plane, and the bundle of every area's settings."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dispatch.settings import DispatchSettings
from tenant_runtime.settings import RuntimeSettings


def _port(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, str(default))
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise ValueError(f"{name} must be a TCP port number, got {raw!r}")
    return int(raw)


def _flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "on", "yes"):
        return True
    if raw.lower() in ("0", "false", "off", "no"):
        return False
    raise ValueError(f"{name} must be on or off, got {raw!r}")


def _networks(env: Mapping[str, str], name: str) -> tuple[str, ...]:
    raw = env.get(name, "127.0.0.0/8,::1/128")
    networks = tuple(part.strip() for part in raw.split(",") if part.strip())
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise ValueError(f"{name} must be comma-separated CIDR networks, got {network!r}") from None
    return networks


@dataclass(frozen=True)
class ControlPlaneSettings:
    database_url: str = "sqlite:///data/control-plane.db"
    host: str = "127.0.0.1"
    port: int = 8000
    site_host: str = "127.0.0.1"
    site_port: int = 8080
    prefect_port: int = 4200  # the local Prefect server of `pressroom up`
    operator_token: str | None = field(default=None, repr=False)
    max_body_bytes: int = 2_000_000
    default_publishes_per_hour: int = 600
    log_level: str = "INFO"
    log_json: bool = True
    migrate_on_start: bool = True
    site_cache: bool = True
    purge_networks: tuple[str, ...] = ("127.0.0.0/8", "::1/128")

    @property
    def public_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, data_dir: Path) -> ControlPlaneSettings:
        env = os.environ if environ is None else environ
        quota = env.get("PRESSROOM_PUBLISHES_PER_HOUR", "600")
        if not quota.isdigit():
            raise ValueError(f"PRESSROOM_PUBLISHES_PER_HOUR must be an integer, got {quota!r}")
        return cls(
            database_url=env.get("PRESSROOM_DATABASE_URL") or f"sqlite:///{data_dir / 'control-plane.db'}",
            host=env.get("PRESSROOM_HOST", "127.0.0.1"),
            port=_port(env, "PRESSROOM_PORT", 8000),
            site_host=env.get("PRESSROOM_SITE_HOST", "127.0.0.1"),
            site_port=_port(env, "PRESSROOM_SITE_PORT", 8080),
            prefect_port=_port(env, "PRESSROOM_PREFECT_PORT", 4200),
            operator_token=env.get("PRESSROOM_OPERATOR_TOKEN") or None,
            max_body_bytes=int(env.get("PRESSROOM_MAX_BODY_BYTES", "2000000")),
            default_publishes_per_hour=int(quota),
            log_level=env.get("PRESSROOM_LOG_LEVEL", "INFO"),
            log_json=env.get("PRESSROOM_LOG_FORMAT", "json") == "json",
            migrate_on_start=_flag(env, "PRESSROOM_MIGRATE_ON_START", True),
            site_cache=_flag(env, "PRESSROOM_SITE_CACHE", True),
            purge_networks=_networks(env, "PRESSROOM_PURGE_ALLOW"),
        )


@dataclass(frozen=True)
class Settings:
    """Every area's settings, read once at start-up."""

    runtime: RuntimeSettings
    dispatch: DispatchSettings
    control_plane: ControlPlaneSettings

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        runtime = RuntimeSettings.from_env(env)
        return cls(
            runtime=runtime,
            dispatch=DispatchSettings.from_env(env),
            control_plane=ControlPlaneSettings.from_env(env, data_dir=runtime.data_dir),
        )
