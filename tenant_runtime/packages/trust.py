"""Trusted publisher keys: the platform's (every tenant trusts them) and each tenant's own.

Platform keys live in the platform keyring, a JSON file under the data directory
(``platform/package-keys.json``) that operators change with ``pressroom packages
keys``; it is rewritten whole (a temporary file, then a rename) under a file
lock, so a reader sees the old list or the new one. A tenant's own keys are rows
of its workspace (``package_key``), changed by its site admins. A key is
trusted until it expires or is revoked; a package signed by any other key is
``package_untrusted``, and so is one whose key was revoked after it was
uploaded but before its run verified it again.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlmodel import Session, select

from tenant_runtime.errors import NotFound, PackageRejected
from tenant_runtime.ids import as_utc, utcnow
from tenant_runtime.packages.signing import decode_public_key, key_id
from tenant_runtime.workspace.package_models import PackageKey

PLATFORM, TENANT = "platform", "tenant"


@dataclass(frozen=True)
class TrustedKey:
    key_id: str
    public_key: bytes
    scope: str  # platform | tenant
    name: str = ""
    added_at: datetime | None = None
    expires_at: datetime | None = None
    revoked_at: datetime | None = None

    def status(self, now: datetime) -> str:
        """trusted, expired or revoked at ``now``."""
        if self.revoked_at is not None and as_utc(self.revoked_at) <= now:
            return "revoked"
        if self.expires_at is not None and as_utc(self.expires_at) <= now:
            return "expired"
        return "trusted"

    def as_json(self, now: datetime) -> dict[str, Any]:
        return {
            "key_id": self.key_id,
            "public_key": base64.b64encode(self.public_key).decode(),
            "scope": self.scope,
            "name": self.name,
            "added_at": as_utc(self.added_at).isoformat() if self.added_at else None,
            "expires_at": as_utc(self.expires_at).isoformat() if self.expires_at else None,
            "revoked_at": as_utc(self.revoked_at).isoformat() if self.revoked_at else None,
            "status": self.status(now),
        }


def _when(value: Any) -> datetime | None:
    return as_utc(datetime.fromisoformat(value)) if isinstance(value, str) and value else None


class PlatformKeyring:
    """The platform's trusted keys, in one JSON file (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def under(cls, data_dir: Path) -> PlatformKeyring:
        return cls(data_dir / "platform" / "package-keys.json")

    def keys(self) -> dict[str, TrustedKey]:
        try:
            entries = json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}
        return {
            e["key_id"]: TrustedKey(
                key_id=e["key_id"],
                public_key=base64.b64decode(e["public_key"]),
                scope=PLATFORM,
                name=e.get("name", ""),
                added_at=_when(e.get("added_at")),
                expires_at=_when(e.get("expires_at")),
                revoked_at=_when(e.get("revoked_at")),
            )
            for e in entries
        }

    @contextmanager
    def _locked(self) -> Iterator[dict[str, TrustedKey]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            keys = self.keys()
            yield keys
            now = utcnow()
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text(json.dumps([k.as_json(now) for k in keys.values()], indent=2) + "\n")
            os.replace(temporary, self.path)

    def add(self, public_key: str, *, name: str = "", expires_at: datetime | None = None) -> TrustedKey:
        """Trust ``public_key`` (base64) for every tenant; adding it again updates its name and expiry."""
        raw = decode_public_key(public_key)
        entry = TrustedKey(key_id(raw), raw, PLATFORM, name, utcnow(), expires_at, None)
        with self._locked() as keys:
            keys[entry.key_id] = entry
        return entry

    def key(self, kid: str) -> TrustedKey:
        """The key ``kid``, or ``package_key_not_found``."""
        return _known(self.keys(), kid)

    def revoke(self, kid: str, *, at: datetime | None = None) -> TrustedKey:
        """Stop trusting ``kid``; revoking it again keeps the first revocation's time."""
        with self._locked() as keys:
            current = _known(keys, kid)
            if current.revoked_at is None:
                keys[kid] = replace(current, revoked_at=at or utcnow())
            return keys[kid]

    def expire(self, kid: str, at: datetime) -> TrustedKey:
        with self._locked() as keys:
            keys[kid] = replace(_known(keys, kid), expires_at=at)
            return keys[kid]


def _known(keys: Mapping[str, TrustedKey], kid: str) -> TrustedKey:
    if kid not in keys:
        raise NotFound("No such platform key.", details={"key_id": kid}, code="package_key_not_found")
    return keys[kid]


def tenant_keys(tx: Session) -> dict[str, TrustedKey]:
    return {
        row.key_id: TrustedKey(
            key_id=row.key_id,
            public_key=base64.b64decode(row.public_key),
            scope=TENANT,
            name=row.name,
            added_at=row.added_at,
            expires_at=row.expires_at,
            revoked_at=row.revoked_at,
        )
        for row in tx.exec(select(PackageKey)).all()
    }


def keyring(tx: Session, platform: PlatformKeyring) -> dict[str, TrustedKey]:
    """Every key the tenant knows: its own, and the platform's (a platform key wins a tie: operators revoke it)."""
    return {**tenant_keys(tx), **platform.keys()}


def trusted_key(keys: Mapping[str, TrustedKey], kid: str, now: datetime) -> TrustedKey:
    """The key ``kid`` if it is trusted now; unknown, expired or revoked is ``package_untrusted``."""
    key = keys.get(kid)
    status = key.status(now) if key is not None else "unknown"
    if key is None or status != "trusted":
        raise PackageRejected(
            "The package is signed by a key this site does not trust.",
            details={"key_id": kid, "key_status": status},
            code="package_untrusted",
        )
    return key


__all__ = ["PLATFORM", "TENANT", "PlatformKeyring", "TrustedKey", "keyring", "tenant_keys", "trusted_key"]
