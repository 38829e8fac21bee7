"""Child processes of the local stack: is a pid alive, stop one for sure, make it die with us.

Every child the stack starts gets a parent-death signal (Linux
``prctl(PR_SET_PDEATHSIG)``), so even a ``kill -9`` of the process that started
it takes it down. The kernel ties that signal to the *thread* that forked the
child, so children must be started from a thread that lives as long as they
should (the main thread); ``parent_death_signal`` is a no-op elsewhere.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["describe_exit", "parent_death_signal", "pid_alive", "signal_and_wait", "tail"]

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_POLL = 0.05


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs; a zombie counts as gone (in a container nobody may ever reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError, ProcessLookupError):
        return False
    return state != "Z"


def parent_death_signal(signum: signal.Signals) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get ``signum`` when the forking thread dies.

    ``None`` off the main thread (the signal would fire when that thread ends, not when we do)
    and where ``prctl`` is missing (not Linux).
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        # Resolved here, before the fork: the child must not load libraries between fork and exec.
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
        # We may have died between the fork and the prctl; then no signal would ever come.
        if os.getppid() != parent:
            os._exit(1)

    return set_death_signal


def describe_exit(returncode: int) -> str:
    """``exit status 3`` or ``signal SIGKILL``, from a ``Popen.returncode``."""
    if returncode < 0:
        try:
            return f"signal {signal.Signals(-returncode).name}"
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


def signal_and_wait(
    pid: int,
    process: subprocess.Popen[bytes] | None,
    signals: Sequence[signal.Signals],
    timeout: float,
    *,
    group: bool = False,
) -> None:
    """Send each signal in turn until ``pid`` exits, waiting ``timeout`` after each.

    ``group`` signals the process group ``pid`` leads (a child we started in its own session),
    which also reaches helpers it forked.
    """
    for signum in signals:
        try:
            if group:
                os.killpg(pid, signum)
            else:
                os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                return
            if process is None and not pid_alive(pid):
                return
            time.sleep(_POLL)
    if process is not None:
        process.wait(timeout=5)


def tail(path: Path | None, lines: int = 40) -> str:
    """The last ``lines`` lines of a log file, or ``""`` if there is none."""
    if path is None or not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
