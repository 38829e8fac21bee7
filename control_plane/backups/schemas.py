"""Schemas of backups, imports and restores."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import msgspec
from msgspec import Meta

from dispatch.runtime.backups import BackupOut, RestorePlanOut


class BackupRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


class BackupRef(msgspec.Struct, forbid_unknown_fields=True):
    tenant: Annotated[str, Meta(min_length=2, max_length=39, pattern=r"^[a-z][a-z0-9-]{1,38}$")]
    id: Annotated[str, Meta(min_length=1, max_length=64, pattern=r"^[0-9A-Za-z_-]+$")]


class ImportRequest(msgspec.Struct, forbid_unknown_fields=True):
    backup: BackupRef
    confirm: bool = False


class RestoreRequest(msgspec.Struct, forbid_unknown_fields=True):
    at: datetime  # with an offset
    dry_run: bool = True
    confirm: bool = False


class UndoRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


__all__ = [
    "BackupOut",
    "BackupRef",
    "BackupRequest",
    "ImportRequest",
    "RestorePlanOut",
    "RestoreRequest",
    "UndoRequest",
]
