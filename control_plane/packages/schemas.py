"""Schemas of packages and trusted publisher keys."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from dispatch.runtime.packages import PackageKeyOut, PackageOut

PackageName = Annotated[str, Meta(min_length=2, max_length=63, pattern=r"^[a-z][a-z0-9-]{1,62}$")]


class PackageInstall(msgspec.Struct, forbid_unknown_fields=True):
    """One of ``archive`` (the package itself, base64, at most 1 MiB) or ``url`` (fetched by the control plane
    from a host on the operator's allow-list, PRESSROOM_PACKAGE_FETCH_ALLOW)."""

    archive: bytes | None = None
    url: Annotated[str, Meta(min_length=1, max_length=2000)] | None = None
    pin_theme: bool = False  # a theme: make it the site's theme in the same transaction
    options: dict[str, Any] = {}
    confirm: bool = False


class PackageRollback(msgspec.Struct, forbid_unknown_fields=True):
    version: Annotated[str, Meta(min_length=1, max_length=64)] | None = None
    confirm: bool = False


class PackageUninstall(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class PackageKeyAdd(msgspec.Struct, forbid_unknown_fields=True):
    public_key: Annotated[str, Meta(min_length=1, max_length=200)]
    name: Annotated[str, Meta(max_length=100)] = ""
    expires_at: datetime | None = None


class PackageKeyExpire(msgspec.Struct, forbid_unknown_fields=True):
    at: datetime


class PackageKeyRevoke(msgspec.Struct, forbid_unknown_fields=True):
    pass


__all__ = [
    "PackageInstall",
    "PackageKeyAdd",
    "PackageKeyExpire",
    "PackageKeyOut",
    "PackageKeyRevoke",
    "PackageName",
    "PackageOut",
    "PackageRollback",
    "PackageUninstall",
]
