"""The supervisor restarts crashed children with backoff, gives up on a crash loop, and never
leaves a child behind: whatever stop signal it gets, how often, or when it is killed outright."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import psutil
import pytest

from control_plane.local import RestartPolicy

REPO = Path(__file__).resolve().parents[3]
EXITED = "child_exited"


def gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie nobody reaps counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_for(check: Callable[[], Any], timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := check():
            return result
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@dataclass
class Harness:
    """One supervisor_harness process and everything it reported starting."""

    root: Path
    process: subprocess.Popen[str] | None = None
    started: list[int] = field(default_factory=list)

    def start(self, children: list[dict[str, Any]], **policy: float) -> Harness:
        config = {"log_dir": str(self.root), "policy": policy, "children": children}
        (self.root / "config.json").write_text(json.dumps(config))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.control_plane.local.supervisor_harness", str(self.root / "config.json")],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group, as `make up` has
        )
        return self

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        path = self.root / "supervisor.log"
        lines = path.read_text().splitlines() if path.exists() else []
        found = [json.loads(line) for line in lines if line.strip()]
        self.started = sorted({e["pid"] for e in found if e["event"] == "child_started"})
        return [e for e in found if name is None or e["event"] == name]

    def wait_event(self, name: str, timeout: float = 30, count: int = 1) -> list[dict[str, Any]]:
        def enough() -> list[dict[str, Any]] | None:
            found = self.events(name)
            return found if len(found) >= count else None

        return wait_for(enough, timeout, f"{count} × {name} in {self.root / 'supervisor.log'}")

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        assert self.process is not None
        output, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, output

    def cleanup(self) -> None:
        # Only what this harness started: its own pid and the children it logged.
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.events()
        for pid in self.started:
            if not gone(pid):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    h = Harness(tmp_path)
    try:
        yield h
    finally:
        h.cleanup()


def serve(tmp_path: Path, name: str, mode: str = "serve", **extra: Any) -> dict[str, Any]:
    ready = str(tmp_path / f"{name}.ready")
    return {"name": name, "mode": mode, "args": [ready], "ready_file": ready, **extra}


def _t(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["timestamp"]).timestamp()


def test_backoff_doubles_from_half_a_second() -> None:
    policy = RestartPolicy()
    assert [policy.delay(n) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 10, 10]


def test_a_crashing_child_is_restarted_with_backoff_while_the_others_keep_running(
    harness: Harness, tmp_path: Path
) -> None:
    counter, ready = tmp_path / "flaky.count", tmp_path / "flaky.ready"
    harness.start(
        [
            serve(tmp_path, "steady"),
            {"name": "flaky", "mode": "crash-times", "args": ["3", str(counter), str(ready)], "ready_file": str(ready)},
        ]
    )
    up = harness.wait_event("harness_up")[0]

    exits = [e for e in harness.events(EXITED) if e["child"] == "flaky"]
    assert [(e["attempt"], e["restart_in"], e["status"]) for e in exits] == [
        (1, 0.5, "exit status 3"),
        (2, 1.0, "exit status 3"),
        (3, 2.0, "exit status 3"),
    ]
    starts = [e for e in harness.events("child_started") if e["child"] == "flaky"]
    gaps = [_t(b) - _t(a) for a, b in itertools.pairwise(starts)]
    assert len(gaps) == 3
    for gap, delay in zip(gaps, (0.5, 1.0, 2.0), strict=True):
        assert delay <= gap < delay + 3.0, gaps  # the upper bound only allows for a loaded machine
    steady = [e for e in harness.events("child_started") if e["child"] == "steady"]
    assert len(steady) == 1 and not gone(up["pids"]["steady"])  # never touched
    assert int(counter.read_text()) == 4

    # A kill -9 from outside is a crash like any other.
    os.kill(up["pids"]["steady"], signal.SIGKILL)
    again = harness.wait_event("child_ready", count=3)[-1]
    assert again["child"] == "steady" and again["pid"] != up["pids"]["steady"]
    killed = [e for e in harness.events(EXITED) if e["child"] == "steady"]
    assert killed[0]["status"] == "signal SIGKILL" and killed[0]["attempt"] == 1

    os.kill(harness.process.pid, signal.SIGTERM)  # type: ignore[union-attr]
    status, output = harness.finish()
    assert status == 0, output
    assert "flaky (pid" in output and "restarting in 0.5 s (attempt 1)" in output
    assert all(gone(pid) for pid in harness.started)


def test_the_attempt_count_resets_once_a_child_stayed_up(harness: Harness, tmp_path: Path) -> None:
    harness.start(
        [serve(tmp_path, "steady"), {"name": "slow", "mode": "crash-after", "args": ["0.6"]}],
        stable_after=0.5,
        crash_window=0.3,
    )
    exits = harness.wait_event(EXITED, count=3)
    assert [e["attempt"] for e in exits] == [1, 1, 1]
    assert [e["restart_in"] for e in exits] == [0.5, 0.5, 0.5]
    harness.process.send_signal(signal.SIGTERM)  # type: ignore[union-attr]
    assert harness.finish()[0] == 0


def test_a_crash_loop_stops_everything_and_shows_the_last_log_lines(harness: Harness, tmp_path: Path) -> None:
    harness.start(
        [serve(tmp_path, "steady"), {"name": "broken", "mode": "exit", "args": ["7", "50"]}], first_delay=0.05
    )
    status, output = harness.finish()
    assert status == 1, output
    assert "broken crashed 5 times within 120 s (last: exit status 7); stopping everything" in output
    shown = output[output.index("last 30 lines of broken's log") :]
    assert "log line 49" in shown and "log line 20" in shown and "log line 19" not in shown
    assert len(harness.events(EXITED)) == 4  # the fifth crash is the loop, not a restart
    assert [e["child"] for e in harness.events("child_stopped")] == ["steady"]
    assert all(gone(pid) for pid in harness.started)


@pytest.mark.parametrize(
    ("signum", "times", "to_group"),
    [
        (signal.SIGTERM, 1, False),
        (signal.SIGINT, 1, False),
        (signal.SIGHUP, 1, False),
        (signal.SIGQUIT, 1, False),
        (signal.SIGTERM, 1, True),  # kill -TERM -<pgid>, as for `make up`'s process group
        (signal.SIGTERM, 3, False),  # repeated signals during the stop do not cut it short
    ],
    ids=["TERM", "INT", "HUP", "QUIT", "TERM-group", "TERM-x3"],
)
def test_a_stop_signal_stops_every_child_and_exits_0(
    harness: Harness, tmp_path: Path, signum: signal.Signals, times: int, to_group: bool
) -> None:
    harness.start(
        [
            serve(tmp_path, "first"),
            serve(tmp_path, "stubborn", mode="ignore-term", stop_timeout=1.0),
            serve(tmp_path, "last"),
        ]
    )
    pids = harness.wait_event("harness_up")[0]["pids"]
    assert harness.process is not None
    for _ in range(times):
        if to_group:
            os.killpg(harness.process.pid, signum)
        else:
            os.kill(harness.process.pid, signum)
        time.sleep(0.2)

    status, output = harness.finish()
    assert status == 0, output
    assert all(gone(pid) for pid in pids.values())
    # Stopped by PID, last started first; the one ignoring SIGTERM needed SIGKILL.
    stopped = harness.events("child_stopped")
    assert [e["child"] for e in stopped] == ["last", "stubborn", "first"]
    assert stopped[1]["status"] == "signal SIGKILL" and stopped[0]["status"] == "signal SIGTERM"
    assert harness.events("stop_requested")[0]["signal"] == signum.name


def test_kill_9_of_the_supervisor_takes_its_children_down(harness: Harness, tmp_path: Path) -> None:
    harness.start([serve(tmp_path, "plain"), serve(tmp_path, "stubborn", mode="ignore-term")])
    pids = list(harness.wait_event("harness_up")[0]["pids"].values())
    assert harness.process is not None
    harness.process.kill()
    harness.process.wait()
    wait_for(lambda: all(gone(pid) for pid in pids), 5, "children to die with the supervisor")


def test_a_stop_during_start_up_stops_what_was_started(harness: Harness, tmp_path: Path) -> None:
    never = {
        "name": "never-ready",
        "mode": "serve",
        "args": [str(tmp_path / "elsewhere")],
        "ready_file": str(tmp_path / "never"),
    }
    harness.start([serve(tmp_path, "first"), never])
    started = harness.wait_event("child_started", count=2)
    assert harness.process is not None
    os.kill(harness.process.pid, signal.SIGTERM)
    status, output = harness.finish()
    assert status == 0, output
    assert not harness.events("harness_up")
    assert all(gone(e["pid"]) for e in started)
