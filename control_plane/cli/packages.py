"""``pressroom packages …``: sign packages (publishers), install and roll them back, manage trusted keys.

keygen   a publisher's Ed25519 key pair (private PEM written mode 600, public key printed)
sign     a package directory (its ``package.json`` holds name, version, kind, description,
         contributions; every other file is listed with its sha256) into a signed archive
install, list, rollback, uninstall   a tenant's packages, through the same services as the API
keys list|add|revoke|expire          a tenant's trusted keys, or the platform's (``--platform``)
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from tenant_runtime.errors import PressroomError

packages_app = typer.Typer(help="Signed packages: themes, plugins, lanes.", no_args_is_help=True)
keys_app = typer.Typer(help="Trusted publisher keys (a tenant's, or the platform's).", no_args_is_help=True)
packages_app.add_typer(keys_app, name="keys")
app.add_typer(packages_app, name="packages")
console = Console(width=200)
DESCRIPTOR = "package.json"


def _fail(exc: PressroomError) -> None:
    console.print(f"[red]{exc.code}[/red]: {exc.message} {json.dumps(exc.details) if exc.details else ''}")
    raise typer.Exit(1)


@packages_app.command("keygen")
def keygen(
    out: Annotated[Path, typer.Option(help="Where to write the private key (PEM, mode 600).")] = Path("publisher.pem"),
) -> None:
    """Create a publisher key pair: keep the private key, give the public key to operators."""
    from tenant_runtime.packages import generate_key, key_id
    from tenant_runtime.packages.signing import decode_public_key

    if out.exists():
        console.print(f"[red]{out} exists[/red]: refusing to overwrite a private key")
        raise typer.Exit(1)
    pem, public = generate_key()
    descriptor = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(pem)
    typer.echo(json.dumps({"key_id": key_id(decode_public_key(public)), "public_key": public, "private_key": str(out)}))


@packages_app.command("sign")
def sign(
    directory: Path,
    key: Annotated[Path, typer.Option(help="The publisher's private key (PEM).")],
    out: Annotated[Path | None, typer.Option(help="The archive to write (default: NAME-VERSION.tar.gz).")] = None,
) -> None:
    """Sign a package directory into an archive: manifest.json (every file's sha256) + signature.json."""
    from tenant_runtime.packages import build_archive, directory_files, manifest_for, sign_manifest

    try:
        files = directory_files(directory)
        descriptor = files.pop(DESCRIPTOR, None)
        if descriptor is None:
            console.print(f"[red]{directory / DESCRIPTOR} is missing[/red]: it names the package (name, version, kind)")
            raise typer.Exit(1)
        fields = json.loads(descriptor)
        files.pop("manifest.json", None)
        files.pop("signature.json", None)
        manifest = manifest_for(files, **fields)
        signature = sign_manifest(key.read_bytes(), manifest)
    except PressroomError as exc:
        _fail(exc)
        return
    archive = build_archive(
        {
            **files,
            "manifest.json": json.dumps(manifest, indent=2).encode(),
            "signature.json": json.dumps(signature).encode(),
        }
    )
    target = out or Path(f"{manifest['name']}-{manifest['version']}.tar.gz")
    target.write_bytes(archive)
    typer.echo(
        json.dumps(
            {
                "archive": str(target),
                "package": f"{manifest['name']}@{manifest['version']}",
                "files": len(files),
                "key_id": signature["key_id"],
                "bytes": len(archive),
            }
        )
    )


@packages_app.command("install")
def install(
    tenant: str,
    archive: Annotated[str, typer.Argument(help="The archive's path, or an http(s) URL on the fetch allow-list.")],
    pin_theme: Annotated[bool, typer.Option("--pin-theme", help="A theme: make it the site's theme.")] = False,
    wait: Annotated[bool, typer.Option(help="Follow the install to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 300,
) -> None:
    """Verify a package now and install it through the install_package flow (from a file or a URL)."""
    from control_plane.cli.operations import follow
    from control_plane.packages.schemas import PackageInstall

    room = services()
    try:
        source = (
            PackageInstall(url=archive, pin_theme=pin_theme, confirm=True)
            if archive.startswith(("http://", "https://"))
            else PackageInstall(archive=Path(archive).read_bytes(), pin_theme=pin_theme, confirm=True)
        )
        result = room.packages.install(CLI_OPERATOR, tenant, source)
    except PressroomError as exc:
        _fail(exc)
        return
    room.handoff.flush()
    console.print(
        f"{result.body['package']['name']}@{result.body['package']['version']}: operation "
        f"{result.body['operation_id']} {result.body['status']}"
    )
    if wait:
        follow(room, tenant, [result.body["operation_id"]], timeout)


@packages_app.command("list")
def list_packages(tenant: str, all_versions: Annotated[bool, typer.Option("--all")] = False) -> None:
    """A tenant's packages: each version, active or not, the key that signed it."""
    room = services()
    table = Table("package", "version", "kind", "status", "pinned", "key", "installed")
    for p in room.packages.installed(CLI_OPERATOR, tenant, include_uninstalled=all_versions):
        table.add_row(
            p.name,
            p.version,
            p.kind,
            p.status,
            "yes" if p.pinned else "",
            f"{p.key_id} ({p.key_scope})",
            p.installed_at.isoformat(timespec="seconds"),
        )
    console.print(table)


@packages_app.command("rollback")
def rollback(
    tenant: str,
    name: str,
    version: Annotated[str | None, typer.Option(help="Default: the version active before this one.")] = None,
    wait: Annotated[bool, typer.Option()] = True,
) -> None:
    """Switch back to an installed version of a package."""
    _queue(lambda room: room.packages.rollback(CLI_OPERATOR, tenant, name, version, confirm=True), tenant, wait)


@packages_app.command("uninstall")
def uninstall(tenant: str, name: str, wait: Annotated[bool, typer.Option()] = True) -> None:
    """Take a package off a site (a pinned theme is refused: release another theme first)."""
    _queue(lambda room: room.packages.uninstall(CLI_OPERATOR, tenant, name, confirm=True), tenant, wait)


def _queue(call: Any, tenant: str, wait: bool) -> None:
    from control_plane.cli.operations import follow

    room = services()
    try:
        result = call(room)
    except PressroomError as exc:
        _fail(exc)
        return
    room.handoff.flush()
    console.print(f"operation {result.body['operation_id']}: {result.body['status']}")
    if wait:
        follow(room, tenant, [result.body["operation_id"]], 300)


def _print_keys(keys: list[Any]) -> None:
    table = Table("key id", "scope", "name", "status", "expires", "public key")
    for k in keys:
        table.add_row(k.key_id, k.scope, k.name, k.status, str(k.expires_at or ""), k.public_key)
    console.print(table)


@keys_app.command("list")
def list_keys(tenant: Annotated[str | None, typer.Argument()] = None) -> None:
    """The keys a tenant trusts (its own and the platform's), or the platform's (no tenant)."""
    room = services()
    _print_keys(room.packages.keys(CLI_OPERATOR, tenant) if tenant else room.platform_keys.keys(CLI_OPERATOR))


@keys_app.command("add")
def add_key(
    public_key: str,
    tenant: Annotated[str | None, typer.Option(help="Trust it for this tenant only.")] = None,
    platform: Annotated[bool, typer.Option("--platform", help="Trust it for every tenant.")] = False,
    name: Annotated[str, typer.Option()] = "",
    expires: Annotated[datetime | None, typer.Option(help="ISO 8601; default: never.")] = None,
) -> None:
    """Trust a publisher's public key (base64), for one tenant or the whole platform."""
    _key_change(
        tenant,
        platform,
        lambda room: (
            room.platform_keys.add(CLI_OPERATOR, public_key, name=name, expires_at=expires)
            if platform
            else room.packages.add_key(CLI_OPERATOR, str(tenant), public_key, name=name, expires_at=expires)
        ),
    )


@keys_app.command("revoke")
def revoke_key(
    key_id: str,
    tenant: Annotated[str | None, typer.Option()] = None,
    platform: Annotated[bool, typer.Option("--platform")] = False,
) -> None:
    """Stop trusting a key at once."""
    _key_change(
        tenant,
        platform,
        lambda room: (
            room.platform_keys.revoke(CLI_OPERATOR, key_id)
            if platform
            else room.packages.revoke_key(CLI_OPERATOR, str(tenant), key_id)
        ),
    )


@keys_app.command("expire")
def expire_key(
    key_id: str,
    at: datetime,
    tenant: Annotated[str | None, typer.Option()] = None,
    platform: Annotated[bool, typer.Option("--platform")] = False,
) -> None:
    """Trust a key until AT only."""
    _key_change(
        tenant,
        platform,
        lambda room: (
            room.platform_keys.expire(CLI_OPERATOR, key_id, at)
            if platform
            else room.packages.expire_key(CLI_OPERATOR, str(tenant), key_id, at)
        ),
    )


def _key_change(tenant: str | None, platform: bool, call: Any) -> None:
    if platform == (tenant is not None):
        console.print("[red]say which keyring[/red]: --tenant SLUG or --platform")
        raise typer.Exit(2)
    try:
        result = call(services())
    except PressroomError as exc:
        _fail(exc)
        return
    body = result.body if hasattr(result, "body") else msgspec.to_builtins(result)
    typer.echo(json.dumps(body, default=str))


__all__ = ["keys_app", "packages_app"]
