"""``python -m benchmarks``: run the suites against a private stack and rewrite docs/performance.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.config import EXTRA_SUITES, SUITE_NAMES, Profile


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small counts and short windows (a smoke run, ~5 min)")
    parser.add_argument(
        "--suite",
        action="append",
        choices=SUITE_NAMES + EXTRA_SUITES,
        metavar="NAME",
        help=f"run only this suite (repeatable): {', '.join(SUITE_NAMES)}; opt-in: {', '.join(EXTRA_SUITES)}",
    )
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results"), help="where the JSON results go")
    parser.add_argument("--docs", type=Path, default=Path("docs"), help="where performance.md and its plots go")
    parser.add_argument("--no-profile", action="store_true", help="skip the py-spy profile of the Prefect server")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory (logs, databases)")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        help="run each suite twice in this stack: first with the control plane and the worker restarted with "
        "these environment variables (repeatable; the old path as a baseline, e.g. PRESSROOM_WORKER_PUSH=0 "
        "PRESSROOM_AGGREGATE_SETTLE_LONE=1), then as built; the JSON gets baseline and versus_baseline",
    )
    parser.add_argument(
        "--fan-out-only",
        action="store_true",
        help="only backup_import's nightly fan-out, in this process without the stack (it runs below the "
        "engine); the suite's backup and import runs are carried over from the last result in --out",
    )
    parser.add_argument(
        "--report-only", action="store_true", help="only regenerate docs/performance.md from the JSON already in --out"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.report_only:
        from benchmarks.report import write_report

        print(f"wrote {write_report(args.out, args.docs)}")
        return 0
    profile = Profile.quick() if args.quick else Profile.full()
    if args.fan_out_only:
        from benchmarks.fan_out_only import run_fan_out_only

        return run_fan_out_only(profile, args.out, args.docs)
    from benchmarks.runner import run

    profile = Profile.quick() if args.quick else Profile.full()
    baseline = dict(item.split("=", 1) for item in args.baseline if "=" in item)
    if len(baseline) != len(args.baseline):
        print("--baseline takes VAR=VALUE", file=sys.stderr)
        return 2
    return run(
        profile,
        suites=args.suite or list(SUITE_NAMES),
        out=args.out,
        docs=args.docs,
        profile_server=not args.no_profile,
        keep=args.keep,
        baseline=baseline,
    )


if __name__ == "__main__":
    raise SystemExit(main())
