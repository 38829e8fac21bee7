"""Where a package's bytes live in the tenant's store.

    packages/archives/{sha256}.tar.gz           the archive as uploaded (content-addressed: one
                                                upload of the same bytes is one object)
    packages/{name}/{version}/files/{path}      each file, staged by the install run
    packages/{name}/{version}/manifest.json     the signed manifest, as signed

Every write is idempotent (a key is written only when missing or different), so a
retried staging step redoes nothing, and a staged version never changes: its
files are immutable once its manifest is verified.
"""

from __future__ import annotations

import hashlib
from typing import Any

from tenant_runtime.errors import Permanent
from tenant_runtime.packages.manifest import canonical
from tenant_runtime.workspace import Workspace

ARCHIVES = "packages/archives/"


def archive_key(sha256: str) -> str:
    return f"{ARCHIVES}{sha256}.tar.gz"


def staged_key(name: str, version: str, path: str) -> str:
    return f"packages/{name}/{version}/files/{path}"


def manifest_key(name: str, version: str) -> str:
    return f"packages/{name}/{version}/manifest.json"


def store_archive(ws: Workspace, data: bytes) -> str:
    """Keep an uploaded (verified) archive; its sha256."""
    digest = hashlib.sha256(data).hexdigest()
    key = archive_key(digest)
    if not ws.store.exists(key):
        ws.store.put(key, data, content_type="application/gzip")
    return digest


def load_archive(ws: Workspace, sha256: str) -> bytes:
    """The archive uploaded with ``sha256``; missing or changed is permanent (re-upload it)."""
    data = ws.store.get(archive_key(sha256))
    if data is None or hashlib.sha256(data).hexdigest() != sha256:
        raise Permanent(
            "The package archive is missing from the store or changed.",
            details={"archive_sha256": sha256},
            code="package_archive_missing",
        )
    return data


def stage_files(ws: Workspace, name: str, version: str, document: dict[str, Any], files: dict[str, bytes]) -> int:
    """Write each file and the manifest under the version's prefix; how many objects were written."""
    written = 0
    for path, content in sorted(files.items()):
        key = staged_key(name, version, path)
        existing = ws.store.get(key)
        if existing is None or existing != content:
            ws.store.put(key, content)
            written += 1
    manifest = canonical(document)
    if ws.store.get(manifest_key(name, version)) != manifest:
        ws.store.put(manifest_key(name, version), manifest, content_type="application/json")
        written += 1
    return written


def read_staged(ws: Workspace, name: str, version: str, entry: dict[str, Any]) -> bytes:
    """A staged file, checked against its manifest entry (missing or changed is permanent)."""
    path = str(entry["path"])
    content = ws.store.get(staged_key(name, version, path))
    if content is None or hashlib.sha256(content).hexdigest() != entry.get("sha256"):
        raise Permanent(
            "An installed package's file is missing from the store or changed.",
            details={"package": f"{name}@{version}", "path": path},
            code="package_file_missing",
        )
    return content


__all__ = ["archive_key", "load_archive", "manifest_key", "read_staged", "stage_files", "staged_key", "store_archive"]
