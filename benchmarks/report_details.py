"""The per-suite lines under "Suite details" in docs/performance.md."""

from __future__ import annotations

from typing import Any

from benchmarks.config import EXTRA_SUITES, SUITE_NAMES
from benchmarks.report_format import fmt as _fmt


def details(results: dict[str, dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for name in SUITE_NAMES + EXTRA_SUITES:
        data = results.get(name)
        if data is None or "error" in data:
            continue
        out.append(f"### {name}\n")
        out += [f"- {line}" for line in _detail_lines(name, data)]
        for note in data.get("notes", []):
            out.append(f"- note: {note}")
        out.append(
            f"- settings: `{data.get('settings', {})}`; {data.get('duration_s', '?')} s; "
            f"raw samples in `benchmarks/results/{name}.json`\n"
        )
    return out


def _p(summary: dict[str, Any], unit: str = "ms") -> str:
    if not summary or not summary.get("n"):
        return "no samples"
    return f"p50 {_fmt(summary['p50'], unit)}, p99 {_fmt(summary['p99'], unit)} (n={summary['n']})"


def _detail_lines(name: str, d: dict[str, Any]) -> list[str]:
    if name == "command_ack":
        s, cap = d["summary_ms"], d.get("capacity_per_s", {})
        rate = d["settings"].get("paced_rate_per_s")
        return [
            f"paced ({_fmt(rate)}/s from {d['settings']['clients']} clients): publish → 202 "
            f"{_p(s['paced_pressroom'])}; bare `create_flow_run_from_deployment` {_p(s['paced_prefect'])}",
            f"saturated ({d['settings']['clients']} clients back to back): publish → 202 "
            f"{_p(s['saturated_pressroom'])}; bare create {_p(s['saturated_prefect'])}",
            f"capacity: {_fmt(cap.get('pressroom'))} publishes/s acknowledged, {_fmt(cap.get('relay'))}/s "
            f"handed to Prefect by the relay, {_fmt(cap.get('prefect'))} bare creations/s",
        ]
    if name == "visible":
        s = d["summary_ms"]
        return [
            f"ack: {_p(s['ack'])}",
            f"visible after the ack: {_p(s['visible_after_ack'])}",
            f"served from: {d.get('served_from')}",
        ]
    if name == "materialized":
        s, ph = d["summary_ms"], d.get("pressroom_phases_ms", {})
        return [
            f"Pressroom runtime worker (queued → succeeded): {_p(s['pressroom'])}",
            f"Prefect process worker (created → completed): {_p(s['process_worker'])}",
            f"in-process floor ({d['settings'].get('steps')} no-op tasks): {_p(s['floor'])}",
            "Pressroom phases: " + ", ".join(f"{k.removesuffix('_s')} {_p(v)}" for k, v in ph.items()),
        ]
    if name == "throughput":
        cpu = d["cpu_per_publish_s"]
        lines = [
            f"Pressroom: {_fmt(d['per_minute']['pressroom'])} publishes/min "
            f"({_fmt(d['per_second']['pressroom'])}/s); process worker: "
            f"{_fmt(d['per_minute']['process_worker'])} runs/min",
            "CPU-s per publish (Pressroom): "
            + ", ".join(f"{k.removesuffix('_cpu_s')} {_fmt(v)}" for k, v in cpu["pressroom"].items()),
            "CPU-s per run (process worker): "
            + ", ".join(f"{k.removesuffix('_cpu_s')} {_fmt(v)}" for k, v in cpu["process_worker"].items()),
        ]
        acks = [s["ack_ms"] for s in d["segments"]["pressroom"]]
        if acks:
            lines.append(f"publish ack under this load: {_p(acks[0])}")
        return lines
    if name == "fairness":
        s, w = d["summary_ms"], d.get("queue_wait_ms", {})
        return [
            f"B with A idle: {_p(s['unloaded'])}; queue wait {_p(w.get('unloaded', {}))}",
            f"B behind A's flood of {d['settings']['flood']}: {_p(s['loaded'])}; "
            f"queue wait {_p(w.get('loaded', {}))}; timed out: {d['flood']['timed_out']}",
            f"A's outstanding operations at B's samples: {d['flood']['a_outstanding_at_samples']}",
        ]
    if name == "retry_cost":
        lines = [
            f"{c['case']}: {c['total']} executions, ideal {c['ideal']} ({c['executions']}), "
            f"{c['attempts']} attempt(s), final {c['status']}"
            for c in d["cases"]
        ]
        lines += [f"{c['case']}: {c['total']} executions, ideal {c['ideal']}" for c in d.get("bare_prefect", [])]
        return lines
    if name == "idle_tenants":
        a, b = d["windows"]["before"], d["windows"]["after"]

        def window(w: dict[str, Any]) -> str:
            cpu = ", ".join(f"{k} {_fmt(v)} %" for k, v in w["cpu_percent"].items())
            return (
                f"{w['tenants']} tenants: worker RSS max {_fmt(w['worker_rss_mb'].get('max'), 'MB')}, "
                f"worker processes {w['worker_processes_max']}, worker → server "
                f"{_fmt(w['worker_requests_per_s'])} req/s; CPU {cpu}"
            )

        return [
            window(a),
            window(b),
            f"tenant creation: {_fmt(d['tenant_creation']['per_s'])} tenants/s; worker start-up with "
            f"{b['tenants']} tenants: {_fmt(d['worker_startup_s'], 's')}",
            f"requests by path with {b['tenants']} tenants: `{b['worker_requests_by_path']}`",
        ]
    if name == "whatif":
        purge = d["purge_call_ms"]
        lines = [
            f"one PURGE: new client per call {_p(purge.get('client_per_call', {}))}; long-lived client "
            f"{_p(purge.get('long_lived_client', {}))}"
        ]
        for variant, v in d["variants"].items():
            lines.append(
                f"{variant}: in-process worker (+ harness client) {_fmt(v['worker_cpu_s_per_publish'])} "
                f"CPU-s/publish, Prefect server {_fmt(v['server_cpu_s_per_publish'])} CPU-s/publish, "
                f"queued → succeeded {_p(v['latency_ms'])}"
            )
        return lines
    if name == "whatif_fairness":
        s = d["summary_ms"]
        return [
            f"tenant queues limited to {d['settings']['queue_concurrency_limit']} runs: B with A idle "
            f"{_p(s['unloaded'])}; B behind A's flood of {d['settings']['flood']} {_p(s['loaded'])}",
            f"A's own delivery rate meanwhile: {_fmt(d['a_publishes_per_s_while_limited'])} publishes/s",
        ]
    if name == "scheduled_backlog":
        lines = []
        for backend, r in d["backends"].items():
            c = r["creation"]
            lines.append(
                f"{backend}: created {c['created']} in {', '.join(f'{k} {_fmt(v)} s' for k, v in c['seconds'].items())}"
                f" → {', '.join(f'{k} {_fmt(v)}/s' for k, v in c['per_s'].items())}; "
                f"DB {_fmt(r['before']['db_bytes'] / 2**20, 'MB')} → {_fmt(r['after']['db_bytes'] / 2**20, 'MB')} "
                f"({_fmt(r['db_bytes_per_run'], 'B')}/run)"
            )
            lines.append(
                f"{backend} idle CPU % before → after: "
                + ", ".join(
                    f"{k} {_fmt(r['before']['cpu_percent'].get(k))} → {_fmt(v)}"
                    for k, v in r["after"]["cpu_percent"].items()
                )
                + f"; pool query {_p(r['before']['pool_query_ms'])} → {_p(r['after']['pool_query_ms'])}"
            )
            lines.append(
                f"{backend} lateness of {r['lateness']['runs']} due runs: {_p(r['lateness']['lateness_ms'])}; "
                f"unclaimed after 120 s: {r['lateness']['unclaimed_after_120s']}"
            )
        return lines
    if name == "dashboard_pages":
        counts, load = d["settings"]["counts"], d["settings"]["loadavg_during"]
        lines = [
            f"tenant `big`: {counts['documents']:,} documents, {counts['operations']:,} operations, "
            f"{counts['media']:,} media, {counts['briefs']:,} briefs, {counts['audit']:,} audit rows "
            f"(bulk-filled in {_fmt(d['settings']['seed_seconds'], 's')}); {d['settings']['rounds']} shuffled rounds; "
            f"1-minute load {_fmt(load['before'][0])} → {_fmt(load['after'][0])} on "
            f"{d.get('machine', {}).get('cpu_count', '?')} CPUs",
        ]
        for page, r in d["pages"].items():
            lines.append(
                f"{page} (`{r['path'].split('/big', 1)[-1] or '/'}`): p50 {_fmt(r['p50_ms'], 'ms')}, "
                f"p95 {_fmt(r['p95_ms'], 'ms')}; same page on the empty tenant p50 {_fmt(r['empty_p50_ms'], 'ms')} "
                f"({_fmt(r['ratio_p50'], '×')}); CPU p50 {_fmt(r.get('cpu_p50_ms'), 'ms')} "
                f"(empty {_fmt(r.get('empty_cpu_p50_ms'), 'ms')}); {_fmt(r['bytes'] / 1024, 'KiB')}"
            )
        return lines
    if name == "backup_import":
        lines = []
        for r in d["runs"]:
            b, i, base = r["backup"], r["import"], r["baseline"]
            lines.append(
                f"{r['documents']} documents ({_fmt(r['object_bytes'] / 2**20, 'MB')} of pages): backup "
                f"{_fmt(b['seconds'], 's')} (SQLite .backup + file copy {_fmt(base['backup_seconds'], 's')}), "
                f"import {_fmt(i['seconds'], 's')} (copy back {_fmt(base['import_seconds'], 's')}); worker RSS "
                f"peak {_fmt(b['rss_peak_mib'], 'MiB')} / {_fmt(i['rss_peak_mib'], 'MiB')} "
                f"(+{_fmt(b['rss_growth_mib'], 'MiB')} / +{_fmt(i['rss_growth_mib'], 'MiB')} over idle)"
            )
        for f in d["fan_out"]:
            lines.append(
                f"fan-out of {f['tenants']} tenants (cold factory): {_fmt(f['rate_per_s'])}/s, "
                f"{_fmt(f['cpu_ms_per_tenant'], 'ms')} CPU a tenant; warm (the next night's fire): "
                f"{_fmt(f.get('warm_rate_per_s'))}/s, {_fmt(f.get('warm_cpu_ms_per_tenant'), 'ms')} CPU; floor "
                f"(one empty write transaction a tenant) {_fmt(f['floor_rate_per_s'])}/s"
            )
        return lines
    if name == "scale":
        return _scale_lines(d)
    return []


def _scale_lines(d: dict[str, Any]) -> list[str]:
    """One line per size, then how each cost grows (log-log slope; 1 is linear)."""
    lines = []
    for pt in d["points"]:
        w, pool, cp = pt["worker"], pt["pool_query"], pt["control_plane"]
        cpu, own = w["idle"]["cpu_percent"], pool["pressroom_pool"]
        poll = (
            f"pool poll {_fmt(own['p50_ms'], 'ms')} ({_fmt(own['server_cpu_ms_per_call'], 'ms')} Prefect + "
            f"{_fmt(own['postgres_cpu_ms_per_call'], 'ms')} PostgreSQL CPU), by queue names "
            f"{_fmt(pool['pressroom_named']['p50_ms'], 'ms')}, bare N queues "
            f"{_fmt(pool['bare_n_queues']['p50_ms'], 'ms')}, bare 1 queue "
            f"{_fmt(pool['bare_one_queue']['p50_ms'], 'ms')}"
        )
        worker = (
            f"worker start-up {_fmt(w['startup_s'], 's')}, RSS {_fmt(w['rss_mb'].get('worker'), 'MB')}, first sweep "
            f"{_fmt(w['first_sweeps']['mean_s'], 's')}, quiet sweep {_fmt(w['idle']['quiet_sweeps']['mean_s'], 's')}; "
            f"idle CPU % worker {_fmt(cpu.get('worker'))} / Prefect {_fmt(cpu.get('prefect_server'))} / "
            f"PostgreSQL {_fmt(cpu.get('postgres'))}"
        )
        control = (
            f"placement lookup {_fmt(cp['placement']['us_per_lookup'])} µs, /metrics "
            f"{_fmt(cp['metrics_scrape_ms'], 'ms')}, /ops/tenants {_fmt(cp['ops_tenants_list_ms'], 'ms')}, relay pass "
            f"{_fmt(w['publish']['relay_pass']['mean_s'], 's')}, publish ack p50 "
            f"{_fmt(w['publish']['ack_ms'].get('p50'), 'ms')}"
        )
        lines.append(
            f"{pt['tenants']} tenants (load {_fmt(pt['loadavg_1m'])}): created {_fmt(pt['creation']['per_s'])}/s; "
            f"{worker}; {poll}; {control}"
        )
    growth = d.get("growth", {})
    lines.append(
        "growth exponents (1 = linear): "
        + ", ".join(f"{k} {_fmt(v.get('overall'))}" for k, v in growth.items() if v.get("overall") is not None)
    )
    per = d.get("per_added_tenant", {})
    lines.append("per added tenant (KB, between sizes): " + "; ".join(f"{k} {v}" for k, v in per.items()))
    return lines
