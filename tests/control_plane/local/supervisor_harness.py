"""A ``Supervisor`` of tiny children in its own process, so tests can signal and kill it.

``python -m tests.control_plane.local.supervisor_harness CONFIG.json``; the config holds
``log_dir``, optional ``policy`` (``RestartPolicy`` fields) and ``children``: each a name,
a children.py ``mode`` and ``args``, optional ``ready_file`` (ready once it exists) and
``stop_timeout``. Events go to ``log_dir/supervisor.log``; ``harness_up`` marks all ready.
The exit status is ``run_supervised``'s, as for ``pressroom up``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from control_plane.local import ChildSpec, EventLog, RestartPolicy, Supervisor, run_supervised


def _spec(child: dict[str, Any], log_dir: Path) -> ChildSpec:
    ready_file = child.get("ready_file")
    return ChildSpec(
        name=child["name"],
        argv=[sys.executable, "-m", "tests.control_plane.local.children", child["mode"], *child.get("args", [])],
        log_path=log_dir / f"{child['name']}.log",
        ready=(lambda: Path(ready_file).exists()) if ready_file else None,
        prepare=(lambda: Path(ready_file).unlink(missing_ok=True)) if ready_file else None,
        ready_timeout=child.get("ready_timeout", 30.0),
        stop_timeout=child.get("stop_timeout", 5.0),
    )


def main(config_path: str) -> int:
    config = json.loads(Path(config_path).read_text())
    log_dir = Path(config["log_dir"])
    events = EventLog(log_dir / "supervisor.log")
    supervisor = Supervisor(events, RestartPolicy(**config.get("policy", {})))
    names = [child["name"] for child in config["children"]]

    def start(sup: Supervisor) -> None:
        for child in config["children"]:
            sup.add(_spec(child, log_dir))
        sup.start(*names)
        events.emit("harness_up", "all children ready", pids={name: sup.pid(name) for name in names})

    try:
        return run_supervised(supervisor, start)
    finally:
        events.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
