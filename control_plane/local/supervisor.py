"""A small process supervisor: start children in order, restart crashed ones, stop all for sure.

It knows nothing of Pressroom: a ``ChildSpec`` is a name, an argv, an
environment, a log file and how to tell the child is ready. A child that exits
while we are not stopping is restarted after an exponential backoff; one that
keeps crashing stops everything (``CrashLoop``). The stop signals (TERM, INT,
HUP, QUIT) only record a request; the main loop then stops every child by its
PID, last started first, and further signals cannot interrupt that. Every
child gets a parent-death signal, so even ``kill -9`` of the supervisor takes
the children with it; that is why children are started from the main thread.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from control_plane.local.errors import CrashLoop, LocalServerError
from control_plane.local.events import EventLog
from control_plane.local.processes import describe_exit, parent_death_signal, signal_and_wait, tail
from control_plane.local.restart_policy import RestartPolicy

__all__ = ["ChildSpec", "RestartPolicy", "StopRequested", "Supervisor", "run_supervised"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)
_TICK_S = 0.2  # between looks while a child starts or waits to be restarted
_IDLE_TICK_S = 5.0  # when all run: an exit (SIGCHLD) or a stop signal wakes us at once anyway


class StopRequested(Exception):
    """A stop signal arrived: stop everything and exit 0."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@dataclass(frozen=True)
class ChildSpec:
    """How to run one child: its command, its log, how to tell it is ready and how to stop it."""

    name: str
    argv: Sequence[str]
    log_path: Path
    env: Mapping[str, str] | None = None
    cwd: Path | None = None
    ready: Callable[[], bool] | None = None  # probed until True; None = ready once started
    ready_timeout: float = 60.0
    prepare: Callable[[], None] | None = None  # before every start; an error here is fatal
    stop_signals: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGKILL)
    stop_timeout: float = 15.0  # wait after each stop signal
    signal_group: bool = True  # signal the process group the child leads, reaching helpers it forked
    # Nobody is left to escalate when we die, so the default is a signal the child cannot ignore.
    death_signal: signal.Signals = signal.SIGKILL


@dataclass
class _Child:
    spec: ChildSpec
    process: subprocess.Popen[bytes] | None = None
    state: str = "stopped"  # stopped | starting | running | waiting (to be restarted)
    started_at: float = 0.0
    ready_by: float = 0.0
    restart_at: float = 0.0
    attempt: int = 0
    crashes: deque[float] = field(default_factory=deque)


class Supervisor:
    """Runs ``ChildSpec`` children; use as a context manager on the main thread."""

    def __init__(self, events: EventLog, policy: RestartPolicy | None = None) -> None:
        self.events = events
        self.policy = policy or RestartPolicy()
        self._children: dict[str, _Child] = {}
        self._signals: list[int] = []
        self._stopping = False
        self._wake_fd: int | None = None
        self._write_fd = -1
        self._saved: dict[int, object] = {}
        self._saved_wakeup = -1

    # --- signals -------------------------------------------------------------

    def __enter__(self) -> Self:
        if threading.current_thread() is not threading.main_thread():
            raise LocalServerError("the supervisor must run on the main thread (parent-death signals follow it)")
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        self._wake_fd = read_fd
        self._write_fd = write_fd
        # Signals write their number to the pipe, so a sleeping loop wakes at once (SIGCHLD too).
        self._saved_wakeup = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        for signum in STOP_SIGNALS:
            self._saved[signum] = signal.signal(signum, self._on_stop_signal)
        self._saved[signal.SIGCHLD] = signal.signal(signal.SIGCHLD, lambda *_: None)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            for signum, handler in self._saved.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]
            signal.set_wakeup_fd(self._saved_wakeup)
            if self._wake_fd is not None:
                os.close(self._wake_fd)
                os.close(self._write_fd)
                self._wake_fd = None

    def _on_stop_signal(self, signum: int, _frame: object) -> None:
        # Only record: the main loop acts, so a second signal can never interrupt a stop.
        self._signals.append(signum)

    def _sleep(self, seconds: float) -> None:
        if self._wake_fd is None:
            time.sleep(seconds)
            return
        select.select([self._wake_fd], [], [], max(0.0, seconds))
        try:
            while os.read(self._wake_fd, 512):
                pass
        except BlockingIOError:
            pass

    # --- children ------------------------------------------------------------

    def add(self, spec: ChildSpec) -> None:
        """Register a child; children stop in the reverse order they were added."""
        self._children[spec.name] = _Child(spec)

    def pid(self, name: str) -> int | None:
        """The pid of child ``name`` while it runs."""
        process = self._children[name].process
        return process.pid if process is not None and process.poll() is None else None

    def start(self, *names: str) -> None:
        """Start children ``names`` and supervise until every one of them is ready."""
        for name in names:
            self._spawn(self._children[name])
        while any(self._children[name].state != "running" for name in names):
            self._sleep(_TICK_S)
            self.tick()

    def pause(self, seconds: float) -> None:
        """Supervise for ``seconds`` (restarting what crashes); raises on a stop request."""
        deadline = time.monotonic() + seconds
        self.tick()
        while (left := deadline - time.monotonic()) > 0:
            busy = any(child.state in ("starting", "waiting") for child in self._children.values())
            self._sleep(min(left, _TICK_S if busy else _IDLE_TICK_S))
            self.tick()

    def run_forever(self) -> None:
        """Supervise until a stop request (``StopRequested``) or a crash loop (``CrashLoop``)."""
        while True:
            self.pause(3600)

    def tick(self) -> None:
        """Handle what happened since the last look: a stop request, exits, readiness, due restarts."""
        if self._signals and not self._stopping:
            raise StopRequested(self._signals[0])
        for child in self._children.values():
            now = time.monotonic()
            if child.process is not None and child.process.poll() is not None:
                self._crashed(child, describe_exit(child.process.returncode))
            elif child.state == "starting":
                self._check_ready(child, now)
            elif child.state == "waiting" and now >= child.restart_at:
                self._spawn(child)

    def _spawn(self, child: _Child) -> None:
        spec = child.spec
        if spec.prepare is not None:
            spec.prepare()
        spec.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(spec.log_path, "ab") as log:
                child.process = subprocess.Popen(
                    list(spec.argv),
                    env=dict(spec.env) if spec.env is not None else None,
                    cwd=spec.cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # a Ctrl-C meant for us reaches the child only through us
                    preexec_fn=parent_death_signal(spec.death_signal),
                )
        except OSError as exc:
            raise LocalServerError(f"cannot start {spec.name}: {exc}") from exc
        child.started_at = time.monotonic()
        child.ready_by = child.started_at + spec.ready_timeout
        child.state = "starting"
        self.events.emit(
            "child_started",
            f"{spec.name} started (pid {child.process.pid})",
            child=spec.name,
            pid=child.process.pid,
            attempt=child.attempt,
            argv=list(spec.argv),
        )
        self._check_ready(child, child.started_at)

    def _check_ready(self, child: _Child, now: float) -> None:
        spec, process = child.spec, child.process
        assert process is not None
        try:
            ready = spec.ready is None or spec.ready()
        except Exception:
            ready = False
        if ready:
            child.state = "running"
            self.events.emit(
                "child_ready",
                f"{spec.name} is ready (pid {process.pid})",
                child=spec.name,
                pid=process.pid,
                seconds=round(now - child.started_at, 2),
            )
        elif now > child.ready_by:
            signal_and_wait(process.pid, process, spec.stop_signals, spec.stop_timeout, group=spec.signal_group)
            self._crashed(child, f"not ready within {spec.ready_timeout:.0f} s")

    def _crashed(self, child: _Child, status: str) -> None:
        spec, process = child.spec, child.process
        assert process is not None
        now = time.monotonic()
        uptime = now - child.started_at
        child.process = None
        if spec.signal_group:
            self._kill_group(process.pid)
        if uptime >= self.policy.stable_after:
            child.attempt = 0
        child.crashes.append(now)
        while child.crashes and now - child.crashes[0] > self.policy.crash_window:
            child.crashes.popleft()
        if len(child.crashes) >= self.policy.crash_limit:
            child.state = "stopped"
            message = (
                f"{spec.name} crashed {len(child.crashes)} times within "
                f"{self.policy.crash_window:.0f} s (last: {status}); stopping everything"
            )
            self.events.emit("crash_loop", message, level="error", child=spec.name, pid=process.pid, status=status)
            raise CrashLoop(spec.name, message, tail(spec.log_path, self.policy.log_lines))
        child.attempt += 1
        delay = self.policy.delay(child.attempt)
        child.state = "waiting"
        child.restart_at = now + delay
        self.events.emit(
            "child_exited",
            f"{spec.name} (pid {process.pid}) exited with {status} after {uptime:.1f} s; "
            f"restarting in {delay:g} s (attempt {child.attempt})",
            level="warning",
            child=spec.name,
            pid=process.pid,
            status=status,
            returncode=process.returncode,
            uptime=round(uptime, 2),
            restart_in=delay,
            attempt=child.attempt,
        )

    @staticmethod
    def _kill_group(pgid: int) -> None:
        # Helpers the child forked into its group must not outlive it.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)

    def run_once(
        self, name: str, argv: Sequence[str], *, env: Mapping[str, str] | None, log_path: Path, timeout: float
    ) -> None:
        """Run a one-off command (a migration) to its end, still supervising and honouring stops."""
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "ab") as log:
            process = subprocess.Popen(
                list(argv),
                env=dict(env) if env is not None else None,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=parent_death_signal(signal.SIGKILL),
            )
        deadline = time.monotonic() + timeout
        try:
            while process.poll() is None:
                if time.monotonic() > deadline:
                    raise LocalServerError(f"{name} did not finish within {timeout:.0f} s; see {log_path}")
                self._sleep(_TICK_S)
                self.tick()
        finally:
            if process.poll() is None:
                signal_and_wait(process.pid, process, (signal.SIGTERM, signal.SIGKILL), 10, group=True)
        if process.returncode != 0:
            raise LocalServerError(f"{name} failed ({describe_exit(process.returncode)}):\n{tail(log_path)}")

    def stop(self) -> None:
        """Stop every child by its PID, last added first; never interrupted by further signals."""
        self._stopping = True
        for child in reversed(list(self._children.values())):
            self._stop_child(child)

    def _stop_child(self, child: _Child) -> None:
        spec, process = child.spec, child.process
        child.state = "stopped"
        if process is None:
            return
        if process.poll() is None:
            self.events.emit(
                "child_stopping",
                f"stopping {spec.name} (pid {process.pid})",
                child=spec.name,
                pid=process.pid,
                signal=spec.stop_signals[0].name,
            )
            try:
                signal_and_wait(process.pid, process, spec.stop_signals, spec.stop_timeout, group=spec.signal_group)
            except subprocess.TimeoutExpired:
                self.events.emit(
                    "child_stuck",
                    f"{spec.name} (pid {process.pid}) survived SIGKILL",
                    level="error",
                    child=spec.name,
                    pid=process.pid,
                )
                return
        if spec.signal_group:
            self._kill_group(process.pid)
        child.process = None
        self.events.emit(
            "child_stopped",
            f"{spec.name} stopped ({describe_exit(process.returncode)})",
            child=spec.name,
            pid=process.pid,
            status=describe_exit(process.returncode),
        )


def run_supervised(supervisor: Supervisor, start: Callable[[Supervisor], None], *, stay: bool = True) -> int:
    """Start with ``start`` and supervise until stopped; returns the exit status (0 = stopped on request)."""
    events = supervisor.events
    status = 0
    with supervisor:
        try:
            start(supervisor)
            if stay:
                supervisor.run_forever()
        except StopRequested as request:
            events.emit("stop_requested", f"received {request}; stopping…", signal=str(request))
        except CrashLoop as crash:
            events.say(f"last {supervisor.policy.log_lines} lines of {crash.child}'s log:\n{crash.log_tail}")
            status = 1
        except Exception as exc:
            events.emit(
                "start_failed",
                f"error ({getattr(exc, 'code', type(exc).__name__)}): {exc}",
                level="error",
                error=repr(exc),
            )
            status = 1
    events.emit("stopped", "every child is stopped", status=status)
    return status
