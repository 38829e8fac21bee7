"""What every ``pressroom`` command shares: the Typer app, the console, settings and services."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.console import Console

from control_plane.auth import Principal

if TYPE_CHECKING:
    from control_plane.container import Services
    from control_plane.settings import Settings

app = typer.Typer(help="Pressroom: a multi-tenant publishing control plane on Prefect.", no_args_is_help=True)
console = Console(stderr=True)
# The operator a shell session acts as; its writes are audited as ``operator:cli``.
CLI_OPERATOR = Principal(token_id="cli", kind="operator")


def settings_from_env() -> Settings:
    from control_plane.settings import Settings

    return Settings.from_env()


def logging_from(settings: Settings) -> None:
    from tenant_runtime.logs import configure_logging

    configure_logging(settings.control_plane.log_level, json=settings.control_plane.log_json)


def services(*, migrate: bool = False) -> Services:
    """The control plane's services, as a shell command uses them (the schema is migrated by `pressroom migrate`)."""
    from control_plane.container import Services

    return Services.build(settings_from_env(), migrate=migrate)


__all__ = ["CLI_OPERATOR", "app", "console", "logging_from", "services", "settings_from_env"]
