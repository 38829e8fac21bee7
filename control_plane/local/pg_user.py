"""The OS user the embedded PostgreSQL runs as, and the command prefix that runs it so.

PostgreSQL refuses to run as root. As root we therefore run ``initdb`` and
``postgres`` as the ``postgres`` OS user (or a ``pressroom`` system user made
on first use). A clone under a mode-700 home (``/root/pressroom``) is out of
that user's reach, and so are the binaries inside the clone's virtualenv. So
when a path is unreachable we switch user through util-linux ``setpriv`` and
keep exactly one capability, ``CAP_DAC_READ_SEARCH``: it lets the user search
and read through directories it cannot otherwise enter, while it still writes
only what it owns (the data directory, chowned to it). When everything is
reachable it switches user with no capability at all. A non-root user runs
PostgreSQL as itself and needs none of this.
"""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from control_plane.local.errors import DataDirUnreachable

__all__ = ["OsUser", "first_untraversable", "postgres_os_user", "run_as_prefix"]

SUPERUSER = "postgres"
_FALLBACK_OS_USER = "pressroom"
_CAPABILITY = "dac_read_search"
_CAP_DAC_READ_SEARCH_BIT = 2  # <linux/capability.h>


@dataclass(frozen=True)
class OsUser:
    """An account PostgreSQL can run as."""

    name: str
    uid: int
    gid: int


def postgres_os_user() -> OsUser | None:
    """The account PostgreSQL runs as: ``None`` (ourselves) unless we are root, which it refuses."""
    if os.geteuid() != 0:
        return None
    for name in (SUPERUSER, _FALLBACK_OS_USER):
        try:
            entry = pwd.getpwnam(name)
            return OsUser(name, entry.pw_uid, entry.pw_gid)
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _FALLBACK_OS_USER],
        check=True,
        capture_output=True,
    )
    entry = pwd.getpwnam(_FALLBACK_OS_USER)
    return OsUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def first_untraversable(path: Path, user: OsUser) -> Path | None:
    """The first existing directory on the way to ``path`` that ``user`` may not enter."""
    gids = set(os.getgrouplist(user.name, user.gid))
    for directory in [*reversed(path.parents), path]:
        if not directory.exists():
            break
        st = directory.stat()
        if st.st_uid == user.uid:
            bit = 0o100
        elif st.st_gid in gids:
            bit = 0o010
        else:
            bit = 0o001
        if not st.st_mode & bit:
            return directory
    return None


def run_as_prefix(user: OsUser, targets: list[Path], *, death_signal: signal.Signals | None, probe: Path) -> list[str]:
    """``setpriv …`` that runs a command as ``user``, able to reach every path in ``targets``.

    ``death_signal`` is set again *after* the switch of user, which clears it. ``probe`` (a
    binary under ``targets``) is run once with ``--version`` to prove the switch works.
    """
    setpriv = setpriv_path()
    blocked = [b for b in (first_untraversable(t, user) for t in targets) if b is not None]
    if blocked:
        _check_can_grant(user, blocked[0], setpriv)
    elif setpriv is None:
        raise DataDirUnreachable(
            "PostgreSQL refuses root, and running it as another user needs util-linux's "
            "setpriv: install util-linux (apt-get install util-linux)"
        )
    assert setpriv is not None
    prefix = [setpriv, f"--reuid={user.uid}", f"--regid={user.gid}", "--init-groups"]
    if blocked:
        prefix += [f"--inh-caps=+{_CAPABILITY}", f"--ambient-caps=+{_CAPABILITY}"]
    if death_signal is not None:
        prefix.append(f"--pdeathsig={death_signal.name}")
    prefix.append("--")
    _check_runs(tuple(prefix), str(probe), user, blocked[0] if blocked else None)
    return prefix


def _unreachable(user: OsUser, blocked: Path, why: str) -> DataDirUnreachable:
    mode = blocked.stat().st_mode & 0o777
    return DataDirUnreachable(
        f"PostgreSQL runs as {user.name!r} (it refuses root) but {user.name!r} cannot enter {blocked} "
        f"(mode {mode:o}), and {why}. Install util-linux's setpriv and allow CAP_DAC_READ_SEARCH "
        f"(e.g. run the container without --cap-drop for it), or put the data directory and the "
        f"virtualenv where {user.name!r} can reach them, or make {blocked} traversable (chmod o+x)"
    )


def setpriv_path() -> str | None:
    """util-linux ``setpriv`` (always on Debian), or ``None``."""
    # Debian's root PATH has /usr/bin, but a scrubbed environment may not.
    candidates = [shutil.which("setpriv"), "/usr/bin/setpriv", "/bin/setpriv"]
    return next((p for p in candidates if p is not None and os.access(p, os.X_OK)), None)


def _check_can_grant(user: OsUser, blocked: Path, setpriv: str | None) -> None:
    if setpriv is None:
        raise _unreachable(user, blocked, "setpriv (util-linux) is not installed to let it through")
    if not _capability_held():
        raise _unreachable(user, blocked, "this process may not hand on CAP_DAC_READ_SEARCH (not in CapBnd/CapPrm)")


def _capability_held() -> bool:
    fields: dict[str, int] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("CapBnd", "CapPrm"):
            fields[key] = int(value.strip(), 16)
    bit = 1 << _CAP_DAC_READ_SEARCH_BIT
    return all(fields.get(key, 0) & bit for key in ("CapBnd", "CapPrm"))


@functools.cache
def _runs(prefix: tuple[str, ...], probe: str) -> str | None:
    try:
        result = subprocess.run([*prefix, probe, "--version"], check=False, capture_output=True, text=True, timeout=30)
    except OSError as exc:
        return str(exc)
    return None if result.returncode == 0 else (result.stderr or result.stdout).strip()


def _check_runs(prefix: tuple[str, ...], probe: str, user: OsUser, blocked: Path | None) -> None:
    error = _runs(prefix, probe)
    if error is None:
        return
    if blocked is not None:
        raise _unreachable(user, blocked, f"switching to it with CAP_DAC_READ_SEARCH failed ({error})")
    raise DataDirUnreachable(f"cannot run PostgreSQL as {user.name!r} through setpriv: {error}")
