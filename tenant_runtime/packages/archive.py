"""A package archive: a gzipped tar of ``manifest.json``, ``signature.json`` and the files the manifest lists.

Reading one never touches a disk or the store: the members are checked (regular
files and directories only, no symlink or hard link, no absolute path, no
``..``, sizes bounded) and read into memory, so a refused archive leaves nothing
behind. ``build_archive`` writes the same bytes for the same directory (sorted
members, zero times and owners), so a publisher's package is reproducible.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from tenant_runtime.errors import PackageRejected

MANIFEST = "manifest.json"
SIGNATURE = "signature.json"
MAX_ARCHIVE_BYTES = 1024 * 1024  # compressed, as uploaded (it travels base64 in a JSON body)
MAX_UNPACKED_BYTES = 16 * 1024 * 1024
MAX_FILES = 500
MAX_PATH = 200
_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,99}")


@dataclass(frozen=True)
class Archive:
    """An archive's members, checked and in memory: the manifest and signature bytes, and every other file."""

    manifest: bytes | None
    signature: bytes | None
    files: dict[str, bytes]


def check_path(path: str) -> str:
    """``path`` if it is a safe relative file path inside the package; else ``package_unsafe_path``."""
    segments = path.split("/")
    if (
        not path
        or len(path) > MAX_PATH
        or path.startswith("/")
        or "\\" in path
        or any(not _SEGMENT.fullmatch(s) or s in (".", "..") for s in segments)
    ):
        raise PackageRejected(
            "A package path must be relative, inside the package, of letters, digits, '.', '_' and '-'.",
            details={"path": path[:MAX_PATH]},
            code="package_unsafe_path",
        )
    return path


def read_archive(data: bytes, *, max_bytes: int = MAX_ARCHIVE_BYTES) -> Archive:
    """Check and read a package archive held in memory (see the module docstring)."""
    if len(data) > max_bytes:
        raise PackageRejected(
            f"A package archive may be at most {max_bytes} bytes.",
            details={"bytes": len(data), "limit": max_bytes},
            code="package_too_large",
        )
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")  # noqa: SIM115 (closed by the with below)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise PackageRejected(
            "The package is not a gzipped tar archive.", details={"error": str(exc)[:200]}, code="package_invalid"
        ) from None
    files: dict[str, bytes] = {}
    total = 0
    try:
        with tar:
            for member in tar:
                name = member.name.removeprefix("./")
                if member.isdir():
                    check_path(name.rstrip("/"))
                    continue
                if not member.isfile():
                    kind = "symlink" if member.issym() else "hard link" if member.islnk() else "special file"
                    raise PackageRejected(
                        f"A package holds regular files only; {name!r} is a {kind}.",
                        details={"path": name[:MAX_PATH], "type": kind},
                        code="package_unsafe_path",
                    )
                check_path(name)
                if name in files:
                    raise PackageRejected(
                        "A path appears twice in the archive.", details={"path": name}, code="package_invalid"
                    )
                if len(files) >= MAX_FILES:
                    raise PackageRejected(
                        f"A package holds at most {MAX_FILES} files.",
                        details={"limit": MAX_FILES},
                        code="package_too_large",
                    )
                total += member.size
                if total > MAX_UNPACKED_BYTES:
                    raise PackageRejected(
                        f"A package unpacks to at most {MAX_UNPACKED_BYTES} bytes.",
                        details={"limit": MAX_UNPACKED_BYTES},
                        code="package_too_large",
                    )
                source = tar.extractfile(member)
                content = source.read(member.size + 1) if source is not None else b""
                if len(content) != member.size:
                    raise PackageRejected(
                        "An archive member is truncated.", details={"path": name}, code="package_invalid"
                    )
                files[name] = content
    except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as exc:
        raise PackageRejected(
            "The package archive is damaged.", details={"error": str(exc)[:200]}, code="package_invalid"
        ) from None
    return Archive(manifest=files.pop(MANIFEST, None), signature=files.pop(SIGNATURE, None), files=files)


def build_archive(files: dict[str, bytes]) -> bytes:
    """A deterministic gzipped tar of ``files`` (path → bytes), as ``read_archive`` reads it."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(files):
            content = files[path]
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(content), 0o644, 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(content))
    return gzip.compress(raw.getvalue(), mtime=0)


def directory_files(root: Path) -> dict[str, bytes]:
    """Every regular file under ``root`` (path relative to it → bytes); a symlink is refused, not followed."""
    files: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if path.is_symlink():
            raise PackageRejected(
                "A package directory must not hold symlinks.", details={"path": relative}, code="package_unsafe_path"
            )
        if path.is_file():
            files[check_path(relative)] = path.read_bytes()
    return files


__all__ = [
    "MANIFEST",
    "MAX_ARCHIVE_BYTES",
    "SIGNATURE",
    "Archive",
    "build_archive",
    "check_path",
    "directory_files",
    "read_archive",
]
