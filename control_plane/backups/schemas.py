"""Schemas of backups, imports and restores."""

from __future__ import annotations

import msgspec

from dispatch.runtime.backups import BackupOut


class BackupRequest(msgspec.Struct, forbid_unknown_fields=True):
    confirm: bool = False


__all__ = ["BackupOut", "BackupRequest"]
