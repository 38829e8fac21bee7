"""docs/performance.md and its plots, regenerated from the JSON results after every run.

The table and figures come from ``benchmarks/results/*.json``; the hand-written
analysis (what the numbers mean, what stands in the way) lives in
``benchmarks/analysis.md`` and is copied in, so a new run never erases it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.config import EXTRA_SUITES, SUITE_NAMES
from benchmarks.report_details import details
from benchmarks.report_format import fmt as _fmt
from benchmarks.results import load_results
from benchmarks.stack import REPO

ANALYSIS = Path(__file__).resolve().parent / "analysis.md"
# Frames every stack passes through (event loop, thread pool, CLI, server plumbing): not where time goes.
_PLUMBING = (
    "threading",
    "asyncio",
    "concurrent",
    "<",
    "typer",
    "click",
    "cyclopts",
    "uvicorn",
    "runpy",
    "prefect.cli",
    "control_plane.cli",
    "anyio",
    "selectors",
    "contextlib",
    "starlette.",
    "fastapi.routing",
    "litestar.app",
    "litestar.middleware",
    "litestar.routes",
    "litestar._asgi",
    "prefect.server.api.server",
    "prefect.server.utilities.server",
    "?:",
    "sniffio",
    "_contextvars",
    "prefect._internal.concurrency",
)


def _verdict(met: bool | str | None) -> str:
    if isinstance(met, str):
        return met
    return "**met**" if met else "**MISSED**" if met is False else "not measured"


def _table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| suite | ratio (Pressroom ÷ baseline) | target | measured | result | Pressroom | baseline |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in SUITE_NAMES + EXTRA_SUITES:
        data = results.get(name)
        if data is None:
            continue
        if "error" in data:
            lines.append(f"| {name} | — | — | — | **FAILED**: {data['error'][:120]} | — | — |")
            continue
        head = data.get("headline", {})
        ratio_text = f"{_fmt(head.get('value'))} ({head.get('metric', '')})"
        second = head.get("second")
        if second:
            ratio_text += f"; {_fmt(second.get('value'))} ({second.get('metric', '')})"
        unit = head.get("unit", "")
        first = True
        for t in data.get("targets") or [{"name": "(none: a measurement)", "value": None, "met": "n/a"}]:
            lines.append(
                f"| {name if first else ''} | {ratio_text if first else ''} | {t['name']} | "
                f"{_fmt(t['value'], t.get('unit', ''))} | {_verdict(t['met'])} | "
                f"{_fmt(head.get('pressroom'), unit) if first else ''} | "
                f"{_fmt(head.get('baseline'), unit) if first else ''} |"
            )
            first = False
    return lines


def _before_after(results: dict[str, dict[str, Any]]) -> list[str]:
    """Suites run twice in one stack (``--baseline VAR=VALUE``): the old path first, then as built."""
    lines: list[str] = []
    for name in SUITE_NAMES + EXTRA_SUITES:
        data = results.get(name) or {}
        versus, before = data.get("versus_baseline"), data.get("baseline") or {}
        if not versus or "error" in data:
            continue
        if not lines:
            lines = [
                "## Before and after (same run)",
                "",
                "Each suite below ran twice in one stack and one sitting: first with the control plane and "
                "the worker restarted with the baseline environment (the old path), then as built.",
                "",
                "| suite | baseline environment | measure | baseline | as built | as built ÷ baseline |",
                "|---|---|---|---|---|---|",
            ]
        env = ", ".join(f"`{k}={v}`" for k, v in (before.get("env") or {}).items())
        head = versus.get("headline") or {}
        rows = []
        if head:
            now, was = head.get("now"), head.get("baseline")
            ratio = now / was if isinstance(now, (int, float)) and was else None
            rows.append((head.get("metric", "headline"), _fmt(was), _fmt(now), _fmt(ratio, "×")))
        for side, p50 in (versus.get("p50_ms") or {}).items():
            rows.append(
                (
                    f"{side.replace('_', ' ')} p50",
                    _fmt(p50["baseline_p50"], "ms"),
                    _fmt(p50["p50"], "ms"),
                    _fmt(p50["ratio"], "×"),
                )
            )
        for index, (measure, was_text, now_text, ratio_text) in enumerate(rows):
            label, where = (name, env) if index == 0 else ("", "")
            lines.append(f"| {label} | {where} | {measure} | {was_text} | {now_text} | {ratio_text} |")
    return [*lines, ""] if lines else []


def _plots(results: dict[str, dict[str, Any]], docs: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    made: list[str] = []
    bars: list[tuple[str, float, float]] = []
    ack = results.get("command_ack", {}).get("summary_ms")
    if ack:
        bars += [
            ("ack (paced)", ack["paced_pressroom"]["p50"], ack["paced_pressroom"]["p99"]),
            ("bare create_flow_run (paced)", ack["paced_prefect"]["p50"], ack["paced_prefect"]["p99"]),
            ("ack (saturated)", ack["saturated_pressroom"]["p50"], ack["saturated_pressroom"]["p99"]),
            ("bare create_flow_run (saturated)", ack["saturated_prefect"]["p50"], ack["saturated_prefect"]["p99"]),
        ]
    vis = results.get("visible", {}).get("summary_ms")
    if vis:
        bars.append(("visible after ack", vis["visible_after_ack"]["p50"], vis["visible_after_ack"]["p99"]))
    mat = results.get("materialized", {}).get("summary_ms")
    if mat:
        bars += [(f"materialized: {k.replace('_', ' ')}", v["p50"], v["p99"]) for k, v in mat.items() if v.get("n")]
    fair = results.get("fairness", {}).get("summary_ms")
    if fair:
        bars += [(f"fairness: B {k}", v["p50"], v["p99"]) for k, v in fair.items() if v.get("n")]
    if bars:
        fig, ax = plt.subplots(figsize=(9, 0.45 * len(bars) + 1.2))
        names = [b[0] for b in bars][::-1]
        ys = range(len(names))
        ax.barh([y + 0.2 for y in ys], [b[1] for b in bars][::-1], height=0.4, label="p50")
        ax.barh([y - 0.2 for y in ys], [b[2] for b in bars][::-1], height=0.4, label="p99", alpha=0.6)
        ax.set_yticks(list(ys), names)
        ax.set_xscale("log")
        ax.set_xlabel("milliseconds (log scale)")
        ax.set_title("Latency: Pressroom and its baselines, same run")
        ax.legend(loc="lower right")
        fig.tight_layout()
        fig.savefig(docs / "perf-latency.png", dpi=110)
        plt.close(fig)
        made.append("perf-latency.png")

    samples = results.get("command_ack", {}).get("samples_ms")
    if samples:
        fig, ax = plt.subplots(figsize=(7, 4))
        for key, label in (
            ("paced_pressroom", "publish → 202, paced"),
            ("paced_prefect", "bare create, paced"),
            ("saturated_pressroom", "publish → 202, saturated"),
            ("saturated_prefect", "bare create, saturated"),
        ):
            values = sorted(samples.get(key, []))
            if values:
                ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=label)
        ax.set_xscale("log")
        ax.set_xlabel("milliseconds (log scale)")
        ax.set_ylabel("fraction of requests")
        ax.set_title("command_ack: latency distribution")
        ax.legend()
        fig.tight_layout()
        fig.savefig(docs / "perf-ack-cdf.png", dpi=110)
        plt.close(fig)
        made.append("perf-ack-cdf.png")

    thr = results.get("throughput")
    if thr and "per_minute" in thr:
        fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
        left.bar(
            ["Pressroom", "process worker"],
            [thr["per_minute"]["pressroom"], thr["per_minute"]["process_worker"]],
            color=["tab:blue", "tab:gray"],
        )
        left.set_ylabel("publishes per minute")
        left.set_title("throughput, 20 tenants")
        cpu = thr["cpu_per_publish_s"]["pressroom"]
        names = [k.removesuffix("_cpu_s") for k in cpu]
        right.bar(names, [v or 0 for v in cpu.values()], color="tab:blue")
        right.axhline(0.25, color="tab:red", linestyle="--", label="server target 0.25")
        right.set_ylabel("CPU-seconds per publish")
        right.set_title("where a publish costs CPU")
        right.tick_params(axis="x", labelrotation=20)
        right.legend()
        fig.tight_layout()
        fig.savefig(docs / "perf-throughput.png", dpi=110)
        plt.close(fig)
        made.append("perf-throughput.png")

    profiles = [(name, data) for name, data in _profiles(results).items() if data.get("self_by_package")]
    if profiles:
        fig, axes = plt.subplots(len(profiles), 1, figsize=(8, 3.2 * len(profiles)), squeeze=False)
        for ax, (name, data) in zip(axes[:, 0], profiles, strict=True):
            rows = data["self_by_package"][:10][::-1]
            ax.barh([r["name"] for r in rows], [100 * r["share"] for r in rows], color="tab:purple")
            ax.set_xlabel("% of on-CPU samples (self time, by package)")
            ax.set_title(name, fontsize=10)
        fig.tight_layout()
        fig.savefig(docs / "perf-profile.png", dpi=110)
        plt.close(fig)
        made.append("perf-profile.png")
    return made


def _profiles(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every py-spy profile in the results, named by process and suite."""
    out: dict[str, dict[str, Any]] = {}
    # The Prefect server first: it is where most of a publish's CPU goes.
    for name, data in (((results.get("throughput") or {}).get("profile") or {}).get("profiles") or {}).items():
        out[f"{name} under sustained publishes (throughput)"] = data
    for name, data in ((results.get("command_ack") or {}).get("profile") or {}).items():
        out[f"{name} under paced publishes (command_ack)"] = data
    return out


def _profile_section(results: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for name, data in _profiles(results).items():
        if "error" in data:
            out.append(f"- {name}: profile failed: {data['error']}")
            continue
        raw = Path(data["raw"])
        rel = raw.relative_to(REPO) if raw.is_absolute() and raw.is_relative_to(REPO) else raw
        out.append(
            f"\n**{name}** — {data['samples']} samples, collapsed stacks in `{rel}` "
            "(gunzip, then open with speedscope or flamegraph.pl)\n"
        )
        out.append("| self time, by package | share |  | inclusive, by function | share |")
        out.append("|---|---|---|---|---|")
        pkgs = data["self_by_package"][:10]
        fns = [
            f
            for f in data["inclusive_by_function"]
            if not f["name"].startswith(_PLUMBING) and not f["name"].endswith(":<module>")
        ][:10]
        for i in range(max(len(pkgs), len(fns))):
            p = pkgs[i] if i < len(pkgs) else None
            f = fns[i] if i < len(fns) else None
            p_share = f"{100 * p['share']:.0f} %" if p else ""
            f_share = f"{100 * f['share']:.0f} %" if f else ""
            out.append(f"| {p['name'] if p else ''} | {p_share} | | `{f['name'][:90] if f else ''}` | {f_share} |")
    return out


def write_report(out: Path, docs: Path) -> Path:
    results = load_results(out)
    docs.mkdir(parents=True, exist_ok=True)
    plots = _plots(results, docs) if results else []
    latest = max(results.values(), key=lambda r: r.get("started_at", ""), default={})
    machine = latest.get("machine", {})
    modes = sorted({r.get("mode", "?") for r in results.values()})
    lines = [
        "# Performance",
        "",
        "Generated by `python -m benchmarks` (`make bench`, or `make bench-quick` for a smoke run) from "
        "`benchmarks/results/*.json`; the analysis section is `benchmarks/analysis.md`. Each suite runs Pressroom "
        "and its baseline in the same run, interleaved, on a private stack (embedded PostgreSQL, Prefect server, "
        "control plane, site server, runtime worker) on loopback. Absolute figures drift on this shared machine; "
        "read the ratios.",
        "",
        f"Mode: {', '.join(modes)} · machine: {machine.get('cpu_count')} CPUs ({machine.get('cpu_model')}), "
        f"Python {machine.get('python')}, Prefect {machine.get('prefect')} · "
        f"git `{(machine.get('git_sha') or '?')[:12]}` (source digest `{machine.get('source_digest', '?')}`; "
        "the lead commits after the run, so the tree measured may be ahead of that commit)"
        f" · runs: {', '.join(sorted({r.get('started_at', '?')[:16] for r in results.values()}))}",
        "",
        "## Results (ratios first)",
        "",
        *_table(results),
        "",
    ]
    lines += _before_after(results)
    lines += [f"![{p}]({p})\n" for p in plots]
    if ANALYSIS.exists():
        lines += ["## Analysis", "", ANALYSIS.read_text().strip(), ""]
    lines += [
        "## Profile of the largest cost",
        "",
        "py-spy, attached by pid while the suite's load runs (100 samples/s, non-blocking, idle threads "
        "left out); shares are of the process's samples. Self time says which library burns the CPU; "
        "inclusive time says which code path asked for it.",
        "",
    ]
    lines += _profile_section(results) or [
        "(no profile in these results: run the throughput suite without `--no-profile`)"
    ]
    lines += ["", "## Suite details", "", *details(results)]
    path = docs / "performance.md"
    path.write_text("\n".join(lines).rstrip() + "\n")
    return path
