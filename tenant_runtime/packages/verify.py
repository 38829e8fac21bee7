"""Verifying a package: the one check every install runs, in the request and again in the run.

In order, each failure a ``PackageRejected`` with its own code, nothing written:

    the archive          package_too_large, package_invalid (not a gzipped tar, damaged),
                         package_unsafe_path (a symlink, a hard link, '..', an absolute path)
    the signature        package_unsigned (no signature.json), package_signature_invalid
    the key              package_untrusted (unknown, expired or revoked; details.key_status)
    the manifest         package_invalid (its shape; details.errors)
    every file           package_hash_mismatch, package_file_missing, package_file_unlisted
    the contents         whatever the package's kind refuses (tenant_runtime.packages.kinds)
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tenant_runtime.errors import PackageRejected
from tenant_runtime.packages.archive import MAX_ARCHIVE_BYTES, read_archive
from tenant_runtime.packages.kinds import PackageCheck, kind_of
from tenant_runtime.packages.manifest import Manifest, canonical, manifest_from, parse_json_object
from tenant_runtime.packages.signing import check_signature, signature_parts
from tenant_runtime.packages.trust import TrustedKey, trusted_key


@dataclass(frozen=True)
class VerifiedPackage:
    """A package whose signature, key, manifest, files and contents all passed."""

    manifest: Manifest
    document: dict[str, Any]  # the signed manifest object, as signed
    files: dict[str, bytes]
    key: TrustedKey
    archive_sha256: str

    @property
    def manifest_sha256(self) -> str:
        return hashlib.sha256(canonical(self.document)).hexdigest()


def verify_package(
    data: bytes,
    keys: Mapping[str, TrustedKey],
    *,
    now: datetime,
    options: Mapping[str, Any] | None = None,
    max_bytes: int = MAX_ARCHIVE_BYTES,
    allow_private_webhooks: bool = False,
) -> VerifiedPackage:
    """Check ``data`` (an archive) against the trusted ``keys`` at ``now``; see the module docstring.
    ``allow_private_webhooks`` is the operator's ``PRESSROOM_WEBHOOK_ALLOW_PRIVATE``, for a plugin's hook URLs."""
    archive = read_archive(data, max_bytes=max_bytes)
    if archive.manifest is None:
        raise PackageRejected("The package has no manifest.json.", code="package_invalid")
    if archive.signature is None:
        raise PackageRejected("The package is not signed (no signature.json).", code="package_unsigned")
    document = parse_json_object(archive.manifest, "manifest.json")
    kid, signature = signature_parts(parse_json_object(archive.signature, "signature.json"))
    key = trusted_key(keys, kid, now)
    check_signature(key.public_key, signature, document)
    manifest = manifest_from(document)
    listed = {f.path: f for f in manifest.files}
    for path, entry in listed.items():
        content = archive.files.get(path)
        if content is None:
            raise PackageRejected(
                "A file the manifest lists is not in the archive.", details={"path": path}, code="package_file_missing"
            )
        if len(content) != entry.size or hashlib.sha256(content).hexdigest() != entry.sha256:
            raise PackageRejected(
                "A file does not match its hash in the manifest.", details={"path": path}, code="package_hash_mismatch"
            )
    unlisted = sorted(set(archive.files) - set(listed))
    if unlisted:
        raise PackageRejected(
            "The archive holds files the manifest does not list.",
            details={"paths": unlisted[:20]},
            code="package_file_unlisted",
        )
    check = PackageCheck(manifest, archive.files, dict(options or {}), allow_private_webhooks=allow_private_webhooks)
    kind_of(manifest.kind).validate(check)
    return VerifiedPackage(manifest, document, archive.files, key, hashlib.sha256(data).hexdigest())


__all__ = ["VerifiedPackage", "verify_package"]
