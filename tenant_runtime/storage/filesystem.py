"""``FilesystemStore``: objects as files under one root directory, written atomically.

A key maps straight to a path (``a/b.html`` -> ``root/a/b.html``) so the tree
stays readable and servable. Two consequences a bucket does not have: a key
cannot be both an object and a "directory" of other keys (``a`` and ``a/b``),
and temporary files must be told apart from objects; they carry a ``%`` in
their name, which no valid key segment can contain.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from tenant_runtime.errors import InvalidObjectKey
from tenant_runtime.storage.base import KEY_SEGMENT, Readable, check_range, copy_stream, validate_key, validate_prefix

_TMP_SUFFIX = ".%tmp"
_FILE_MODE = 0o644
# A concurrent delete may prune the parent directory between mkdir and the temp file.
_PUT_ATTEMPTS = 3


class FilesystemStore:
    """Objects as files under ``root``; content types are not kept."""

    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root.resolve()

    def __repr__(self) -> str:
        return f"FilesystemStore(root={str(self.root)!r})"

    def _path(self, key: str) -> Path:
        validate_key(key)
        path = self.root.joinpath(*key.split("/"))
        # Keys cannot hold '..', but a symlink inside the root could still point outside it.
        if not path.resolve().is_relative_to(self.root):
            raise InvalidObjectKey(
                "The object key resolves outside the store.", details={"key": key, "reason": "outside_root"}
            )
        return path

    def put(self, key: str, data: bytes, *, content_type: str = "application/octet-stream") -> None:
        """Write ``data`` to a temp file beside the target, fsync it, then rename it into place."""
        self._put(key, lambda handle: handle.write(data))

    def put_stream(self, key: str, source: Readable, *, content_type: str = "application/octet-stream") -> None:
        """Copy ``source`` into a temp file chunk by chunk, then rename it into place (as ``put``)."""
        self._put(key, lambda handle: copy_stream(source, handle))

    def _put(self, key: str, write: Callable[[BinaryIO], object]) -> None:
        path = self._path(key)
        try:
            fd, tmp_name = self._temp_beside(path)
            try:
                with os.fdopen(fd, "wb") as handle:
                    # mkstemp creates 0600 files; objects are meant to be readable like any other file here.
                    os.fchmod(handle.fileno(), _FILE_MODE)
                    write(handle)
                    handle.flush()
                    os.fsync(handle.fileno())
                os.replace(tmp_name, path)
            except BaseException:
                Path(tmp_name).unlink(missing_ok=True)
                raise
        except (NotADirectoryError, IsADirectoryError, FileExistsError) as exc:
            raise InvalidObjectKey(
                "On the filesystem store a key cannot be both an object and a prefix of other keys.",
                details={"key": key, "reason": "path_conflict"},
            ) from exc
        _fsync_dir(path.parent)

    def _temp_beside(self, path: Path) -> tuple[int, str]:
        """A temp file in the target's directory, made first; once it exists, nothing can prune the directory."""
        attempts = 0
        while True:
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                raise IsADirectoryError(str(path))
            try:
                return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=_TMP_SUFFIX)
            except FileNotFoundError:  # a concurrent delete pruned the directory just made
                attempts += 1
                if attempts == _PUT_ATTEMPTS:
                    raise

    def get(self, key: str) -> bytes | None:
        """The file's bytes, or ``None`` when no object is stored under ``key``."""
        path = self._path(key)
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def reader(self, key: str) -> BinaryIO | None:
        """The file opened for reading, or ``None`` when no object is stored under ``key``."""
        path = self._path(key)
        try:
            return path.open("rb")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def read_range(self, key: str, offset: int, length: int) -> bytes | None:
        """``length`` bytes of the file from ``offset`` (fewer at its end), or ``None`` when missing."""
        check_range(offset, length)
        handle = self.reader(key)
        if handle is None:
            return None
        with handle:
            handle.seek(offset)
            return handle.read(length)

    def delete(self, key: str) -> bool:
        """Remove the file and any directories it leaves empty; True if it existed."""
        path = self._path(key)
        if path.is_dir():
            return False
        try:
            path.unlink()
        except (FileNotFoundError, NotADirectoryError):
            return False
        self._prune(path.parent)
        return True

    def _prune(self, directory: Path) -> None:
        # Empty directories would otherwise block a later put of a key with that name.
        while directory != self.root and directory.is_relative_to(self.root):
            try:
                directory.rmdir()
            except OSError:
                return
            directory = directory.parent

    def exists(self, key: str) -> bool:
        """Whether a file is stored under ``key``."""
        return self._path(key).is_file()

    def list(self, prefix: str = "") -> list[str]:
        """Sorted keys starting with ``prefix``, found by walking the tree."""
        validate_prefix(prefix)
        # Only the directory holding the prefix's last segment can contain matches.
        head = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self.root.joinpath(*head.split("/")) if head else self.root
        if not start.is_dir() or not start.resolve().is_relative_to(self.root):
            return []
        keys: list[str] = []
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = [name for name in dirnames if KEY_SEGMENT.fullmatch(name)]
            relative = Path(dirpath).relative_to(self.root).as_posix()
            base = "" if relative == "." else f"{relative}/"
            for name in filenames:
                key = base + name
                if not KEY_SEGMENT.fullmatch(name) or not key.startswith(prefix):
                    continue
                # Symlinked files are skipped: get() refuses them when they point outside the root.
                if not os.path.islink(os.path.join(dirpath, name)):
                    keys.append(key)
        return sorted(keys)


def _fsync_dir(directory: Path) -> None:
    # The rename is only durable once the directory entry itself is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["FilesystemStore"]
