"""Tiny children for the supervisor tests: ``python -m tests.control_plane.local.children MODE ARGS``.

serve READY_FILE              write READY_FILE, then sleep until signalled
ignore-term READY_FILE        the same, but ignore SIGTERM (only SIGKILL ends it)
exit CODE LINES               print LINES numbered lines, exit with CODE at once
crash-times N COUNTER READY   exit 3 on each of the first N starts (counted in COUNTER), then serve
crash-after SECONDS           run SECONDS, then exit 4
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path


def _serve(ready: str) -> None:
    print(f"pid {os.getpid()} serving", flush=True)
    Path(ready).write_text(str(os.getpid()))
    while True:
        time.sleep(3600)


def main(argv: list[str]) -> int:
    mode, args = argv[0], argv[1:]
    if mode == "serve":
        _serve(args[0])
    elif mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _serve(args[0])
    elif mode == "exit":
        for n in range(int(args[1])):
            print(f"log line {n}", flush=True)
        return int(args[0])
    elif mode == "crash-times":
        counter = Path(args[1])
        starts = int(counter.read_text()) + 1 if counter.exists() else 1
        counter.write_text(str(starts))
        if starts <= int(args[0]):
            print(f"start {starts}: crashing", flush=True)
            return 3
        _serve(args[2])
    elif mode == "crash-after":
        time.sleep(float(args[0]))
        return 4
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
