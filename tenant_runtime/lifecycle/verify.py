"""Checking a backup against its manifest before anything is written: every part, every object, every byte.

A backup is refused (``BackupInvalid``, permanent: the import is dead at once,
nothing written) when its manifest is missing, unreadable, of another format,
from a schema this code does not know, or not the one the import was asked
for; when any part is missing, truncated or changed (by its size and sha256);
when a table's row count differs; or when an object key would leave the tenant.
The error names every part that does not match (the first 20 in full).
"""

from __future__ import annotations

from typing import Any

from tenant_runtime.errors import InvalidObjectKey
from tenant_runtime.lifecycle.files import BackupFiles
from tenant_runtime.lifecycle.format import (
    FORMAT,
    FORMAT_VERSION,
    NOT_SITE_PREFIXES,
    BackupInvalid,
    FileEntry,
    HashingReader,
    Manifest,
    ObjectEntry,
    TableEntry,
    lines,
    mismatch,
)
from tenant_runtime.storage import validate_key
from tenant_runtime.workspace.migrations import script_directory

SHOWN = 20


def check_manifest(files: BackupFiles, expected_sha256: str | None) -> Manifest:
    """The manifest, if it is a manifest this code can import and the one that was asked for."""
    manifest, sha256 = files.manifest()
    if expected_sha256 is not None and sha256 != expected_sha256:
        raise BackupInvalid(
            "The backup's manifest is not the one the import was asked for (it changed since).",
            details={"mismatches": [{"file": "manifest.json", "expected_sha256": expected_sha256, "sha256": sha256}]},
        )
    if manifest.format != FORMAT or manifest.format_version > FORMAT_VERSION:
        raise BackupInvalid(
            "This is not a backup this version of Pressroom can read.",
            details={"format": manifest.format, "format_version": manifest.format_version},
            code="backup_format_unknown",
        )
    known = {revision.revision for revision in script_directory().walk_revisions()}
    if manifest.source.schema_revision not in known:
        raise BackupInvalid(
            f"The backup was made at workspace revision {manifest.source.schema_revision}, "
            "which this version of Pressroom does not know: import it with a newer one.",
            details={"revision": manifest.source.schema_revision},
            code="workspace_revision_unknown",
        )
    return manifest


def _read(files: BackupFiles, entry: FileEntry, *, count_lines: bool = False) -> tuple[int | None, str | None, int]:
    """(bytes, sha256, lines) of a part as stored; (None, None, 0) when it is missing."""
    source = files.reader(entry.path)
    if source is None:
        return None, None, 0
    hashing = HashingReader(source)
    counted = 0
    try:
        if count_lines:
            counted = sum(1 for _ in lines(hashing))
        else:
            while hashing.read(1 << 20):
                pass
    finally:
        hashing.close()
    return hashing.bytes, hashing.sha256, counted


def _check_entry(files: BackupFiles, entry: FileEntry, problems: list[dict[str, Any]]) -> None:
    is_table = isinstance(entry, TableEntry)
    size, sha256, counted = _read(files, entry, count_lines=is_table)
    if size != entry.bytes or sha256 != entry.sha256:
        problems.append(mismatch(entry.path, entry, size, sha256))
    elif isinstance(entry, TableEntry) and counted != entry.rows:
        problems.append({"file": entry.path, "expected_rows": entry.rows, "rows": counted, "problem": "rows"})


def verify_backup(files: BackupFiles, *, expected_sha256: str | None = None) -> dict[str, Any]:
    """Check the whole backup; what it holds, or ``BackupInvalid`` naming every part that does not match."""
    manifest = check_manifest(files, expected_sha256)
    problems: list[dict[str, Any]] = []
    for entry in manifest.files():
        _check_entry(files, entry, problems)
    objects = total = 0
    if not any(p["file"] == manifest.objects.path for p in problems):
        source = files.reader(manifest.objects.path)
        if source is None:  # gone since it was read a moment ago
            raise BackupInvalid("The backup's object index disappeared.", details={"file": manifest.objects.path})
        try:
            for line in lines(source):
                found = _object(line, problems)
                if found is None:
                    continue
                objects += 1
                total += found.size
                _check_entry(files, found.file(), problems)
        finally:
            source.close()
        if (objects, total) != (manifest.objects.count, manifest.objects.total_bytes):
            problems.append(
                {
                    "file": manifest.objects.path,
                    "expected_objects": manifest.objects.count,
                    "objects": objects,
                    "problem": "count",
                }
            )
    if problems:
        named = ", ".join(f"{p['file']} ({p['problem']})" for p in problems[:5])
        more = f" and {len(problems) - 5} more" if len(problems) > 5 else ""
        raise BackupInvalid(
            f"The backup does not match its manifest: {named}{more}. Nothing was imported.",
            details={"mismatches": problems[:SHOWN], "count": len(problems), "backup_id": manifest.backup_id},
        )
    return {
        "tenant": manifest.tenant,
        "tables": len(manifest.tables),
        "rows": sum(t.rows for t in manifest.tables),
        "objects": objects,
        "bytes": total,
    }


def _object(line: bytes, problems: list[dict[str, Any]]) -> ObjectEntry | None:
    try:
        entry = ObjectEntry.decode(line)
        validate_key(entry.key)
    except (ValueError, KeyError, InvalidObjectKey) as exc:
        problems.append({"file": "objects.jsonl", "problem": "bad entry", "error": str(exc)[:200]})
        return None
    if entry.key.startswith(NOT_SITE_PREFIXES):
        problems.append({"file": "objects.jsonl", "problem": "bad entry", "key": entry.key[:100]})
        return None
    return entry


__all__ = ["check_manifest", "verify_backup"]
