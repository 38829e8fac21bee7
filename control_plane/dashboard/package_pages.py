"""Packages: the themes, plugins and lanes installed on the site (every version, which is active), install
from an uploaded signed archive, roll back to an installed version, uninstall, and the publisher keys the
site trusts (add, expire, revoke) — each through the tenant API's own package service (verified in the
request: a bad signature or hash is refused with its code and nothing is stored)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.params import Body

from control_plane.auth import Principal
from control_plane.container import Services
from control_plane.dashboard.commands import command_redirect
from control_plane.dashboard.context import site_for
from control_plane.dashboard.forms import FormData, checked, form_key, new_form_key, text, utc_instant
from control_plane.dashboard.views import flash_error, page, see_other, url
from control_plane.http.guards import MULTIPART
from control_plane.packages.schemas import PackageInstall
from tenant_runtime.errors import BadRequest


@dataclass
class PackageUpload:
    """The install form: the archive or its URL, and its ticks (multipart, so every field is text)."""

    file: UploadFile | None = None
    url: str = ""
    csrf_token: str = ""
    form_key: str = ""
    pin_theme: str = ""
    confirm: str = ""


class PackagePages(Controller):
    """``/dashboard/sites/{tenant}/packages``."""

    path = "/sites/{tenant:str}/packages"

    @get("/", sync_to_thread=True)
    def packages(
        self, request: Request[Any, Any, Any], tenant: str, signed_in: Principal, services: Services
    ) -> Response[str]:
        """Installed packages by name (every version, newest first) and the trusted keys."""
        installed = services.packages.installed(signed_in, tenant)
        names: dict[str, list[Any]] = {}
        for row in installed:
            names.setdefault(row.name, []).append(row)
        return page(
            request,
            "packages.html",
            principal=signed_in,
            site=site_for(services, signed_in, tenant),
            packages=names,
            keys=services.packages.keys(signed_in, tenant),
            form_key=new_form_key(),
        )

    @post("/", sync_to_thread=True, opt={"body": MULTIPART})
    def install(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        data: Annotated[PackageUpload, Body(media_type=RequestEncodingType.MULTI_PART)],
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Install (or upgrade to) the uploaded package, or the one at a URL on the operator's allow-list,
        confirmed; refusals (signature, hash, key, URL not allowed) flashed."""
        archive = data.file.file.read() if data.file is not None and data.file.filename else None
        install = PackageInstall(
            archive=archive or None,
            url=data.url.strip()[:2000] or None,
            pin_theme=checked(vars(data), "pin_theme"),
            confirm=checked(vars(data), "confirm"),
        )

        def says(done: Any) -> str:
            package = done.body.get("package") or {}
            return (
                f"{package.get('name')} {package.get('version')} ({package.get('kind')}) is verified; "
                f"operation {done.body.get('operation_id')} installs it."
            )

        return command_redirect(
            request,
            url("sites", tenant, "packages"),
            lambda: services.packages.install(signed_in, tenant, install, idempotency_key=form_key(vars(data))),
            says,
        )

    @post("/{name:str}/{change:str}", sync_to_thread=True)
    def change(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        name: str,
        change: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Roll back to an installed version, or uninstall; both confirmed."""
        back = url("sites", tenant, "packages")
        confirm, key = checked(data, "confirm"), form_key(data)
        if change == "rollback":
            version = text(data, "version").strip() or None
            return command_redirect(
                request,
                back,
                lambda: services.packages.rollback(
                    signed_in, tenant, name, version, confirm=confirm, idempotency_key=key
                ),
                lambda done: (
                    f"Operation {done.body.get('operation_id')} switches {name} to {version or 'its previous version'}."
                ),
            )
        if change == "uninstall":
            return command_redirect(
                request,
                back,
                lambda: services.packages.uninstall(signed_in, tenant, name, confirm=confirm, idempotency_key=key),
                lambda done: f"Operation {done.body.get('operation_id')} takes {name} off the site.",
            )
        flash_error(request, BadRequest("Roll back or uninstall.", details={"change": change}))
        return see_other(back)

    @post("/keys", sync_to_thread=True)
    def add_key(
        self, request: Request[Any, Any, Any], tenant: str, data: FormData, signed_in: Principal, services: Services
    ) -> Response[Any]:
        """Trust a publisher's Ed25519 public key (base64) for this site."""
        return command_redirect(
            request,
            url("sites", tenant, "packages"),
            lambda: services.packages.add_key(
                signed_in, tenant, text(data, "public_key").strip(), name=text(data, "name").strip()[:100]
            ),
            lambda done: f"Packages signed by {done.body.get('key_id')} are trusted on this site.",
        )

    @post("/keys/{key_id:str}/{change:str}", sync_to_thread=True)
    def change_key(
        self,
        request: Request[Any, Any, Any],
        tenant: str,
        key_id: str,
        change: str,
        data: FormData,
        signed_in: Principal,
        services: Services,
    ) -> Response[Any]:
        """Revoke a key at once, or let it expire at a time (UTC)."""
        back = url("sites", tenant, "packages")
        if change == "revoke":
            return command_redirect(
                request,
                back,
                lambda: services.packages.revoke_key(signed_in, tenant, key_id),
                lambda _: f"{key_id} is revoked: packages it signed can no longer be installed.",
            )
        if change == "expire":
            return command_redirect(
                request,
                back,
                lambda: services.packages.expire_key(signed_in, tenant, key_id, utc_instant(text(data, "at"))),
                lambda _: f"{key_id} is trusted until {text(data, 'at').strip()} UTC.",
            )
        flash_error(request, BadRequest("Revoke or expire.", details={"change": change}))
        return see_other(back)


__all__ = ["PackagePages", "PackageUpload"]
