"""``pressroom operations …`` and ``pressroom runs …``: operating deliveries from a shell.

Every effect goes through the same services as the API and the dashboard, as
the CLI's operator principal.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Annotated, Any

import msgspec
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.container import Services
from dispatch.retention import OUTCOME_OF_STATE, PruneReport
from tenant_runtime.operation_states import settled

operations_app = typer.Typer(help="Operations (deliveries) across tenants.", no_args_is_help=True)
runs_app = typer.Typer(help="Prefect flow runs behind operations.", no_args_is_help=True)
app.add_typer(operations_app, name="operations")
app.add_typer(runs_app, name="runs")
# Wide enough that operation ids never wrap when output goes to a pipe or a file.
console = Console(width=200)


def _operation(room: Services, tenant: str, operation_id: str) -> dict[str, Any]:
    return dict(msgspec.to_builtins(room.operations.get(CLI_OPERATOR, tenant, operation_id)))


@operations_app.command("list")
def list_operations(
    status: Annotated[str | None, typer.Option(help="e.g. dead, failed, queued")] = None,
    tenant: Annotated[str | None, typer.Option()] = None,
    limit: Annotated[int, typer.Option()] = 50,
) -> None:
    """Operations, newest first (all tenants unless --tenant)."""
    room = services()
    tenants = [room.tenants.get(tenant)] if tenant else room.tenants.list()
    table = Table("tenant", "kind", "status", "retries", "error", "run")
    table.columns[0].no_wrap = True
    table.add_column("operation", no_wrap=True)
    for op in room.operations.across(CLI_OPERATOR, tenants, status=status, limit=limit):
        error = f"{op.error['code']}: {op.error['message'][:60]}" if op.error else ""
        table.add_row(op.tenant or "", op.kind, op.status, str(op.retries), error, op.run_url or "(unsent)", op.id)
    console.print(table)


@operations_app.command("retry")
def retry(
    tenant: str,
    operation_id: str,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = True,
    timeout: Annotated[float, typer.Option()] = 300,
) -> None:
    """Replay a failed or dead operation; completed steps are not redone."""
    room = services()
    outcome = room.operations.retry(CLI_OPERATOR, tenant, operation_id)
    room.handoff.flush()  # the run is (re)scheduled before this process moves on
    console.print(f"operation {operation_id}: {outcome.body['status']}")
    if wait:
        follow(room, tenant, [operation_id], timeout)


def follow(room: Services, tenant: str, operation_ids: list[str], timeout: float) -> dict[str, str]:
    """Show a progress bar until every operation is final (or the timeout passes)."""
    statuses: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        bar = progress.add_task(f"{tenant}: delivering", total=len(operation_ids))
        while time.monotonic() < deadline:
            current = [_operation(room, tenant, op) for op in operation_ids]
            statuses = {op["id"]: op["status"] for op in current}
            done = sum(settled(op["status"], op["next_attempt_at"]) for op in current)
            progress.update(bar, completed=done, description=f"{tenant}: " + ", ".join(sorted(set(statuses.values()))))
            if done == len(operation_ids):
                break
            time.sleep(0.5)
    return statuses


@runs_app.command("describe")
def describe(
    tenant: str,
    operation_id: str,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """An operation: every step of its run (status, attempts, error, start, duration), why it waits,
    its attempts and its Prefect flow run (state, queue, tags, link)."""
    room = services()
    operation, run = asyncio.run(_describe(room, tenant, operation_id))
    if as_json:
        typer.echo(json.dumps({"operation": operation, "flow_run": run}, default=str, indent=2))
        return
    console.print(f"[bold]{operation['id']}[/bold]  {operation['kind']}  [bold]{operation['status']}[/bold]")
    if operation["error"]:
        console.print(f"error: {operation['error']['code']}: {operation['error']['message']}")
    waiting = operation.get("waiting")
    if waiting:
        until = f" until {waiting['until']}" if waiting.get("until") else ""
        what = f" ({waiting['event_type']})" if waiting.get("event_type") else ""
        console.print(f"waiting: {waiting['reason']}{what}{until}")
    control = operation.get("control")
    if control:
        applied = "applied" if control["applied"] else "not applied yet"
        console.print(f"control: {control['action']} by {control['by']} ({applied})")
    if operation.get("restarts"):
        console.print(f"restarts: {operation['restarts']}")
    steps = Table("step", "status", "attempts", "started", "duration", "error")
    for step in operation.get("steps", []):
        duration = f"{step['duration_ms']} ms" if step["duration_ms"] is not None else ""
        steps.add_row(
            step["name"],
            step["status"],
            str(step["attempts"]),
            str(step["started_at"] or ""),
            duration,
            (step["error"] or "")[:80],
        )
    console.print(steps)
    table = Table("attempt", "started", "finished", "step", "error")
    for attempt in operation["attempts"]:
        table.add_row(
            str(attempt["number"]),
            str(attempt["started_at"]),
            str(attempt["finished_at"] or ""),
            attempt["step"] or "",
            (attempt["error"] or "")[:80],
        )
    console.print(table)
    if run is None:
        console.print("flow run: not sent yet" + (f" ({operation['send_error']})" if operation["send_error"] else ""))
    else:
        console.print(
            f"flow run: {run['name']}  state={run['state']}  queue={run['work_queue_name']}  "
            f"tags={','.join(run['tags'])}\n  {operation['run_url']}"
        )


async def _describe(room: Services, tenant: str, operation_id: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    try:
        described = await room.operations.describe(CLI_OPERATOR, tenant, operation_id)
        operation = dict(msgspec.to_builtins(described))
        run = await _read_run(room, operation["flow_run_id"]) if operation["flow_run_id"] else None
        return operation, run
    finally:
        await room.prefect.close()


@runs_app.command("timeline")
def timeline(
    tenant: str,
    operation_id: str,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Content, control and engine events of one operation, oldest first."""
    room = services()
    out = asyncio.run(_timeline(room, tenant, operation_id))
    if as_json:
        typer.echo(json.dumps(msgspec.to_builtins(out), default=str, indent=2))
        return
    table = Table("at", "source", "event", "detail")
    for entry in out.entries:
        detail = ", ".join(f"{k}={v}" for k, v in entry.detail.items() if v not in (None, ""))
        table.add_row(entry.at.isoformat(timespec="milliseconds"), entry.source, entry.event, detail[:100])
    console.print(table)
    if out.prefect != "ok":
        console.print("(Prefect did not answer: only the operation's own record is shown)")


async def _timeline(room: Services, tenant: str, operation_id: str) -> Any:
    try:
        return await room.operations.timeline(CLI_OPERATOR, tenant, operation_id)
    finally:
        await room.prefect.close()


@runs_app.command("prune")
def prune(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would go; delete nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Delete finished flow runs past their tenant's retention from Prefect (operation records stay)."""
    room = services()
    policy = room.settings.dispatch.retention
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=as_json
    ) as progress:
        verb = "would delete" if dry_run else "deleted"
        bar = progress.add_task("reading finished runs", total=None)

        def show(report: PruneReport) -> None:
            progress.update(bar, description=f"examined {report.examined}, {verb} {report.deleted}")

        report = asyncio.run(_prune(room, dry_run, show))
    if as_json:
        typer.echo(json.dumps(report.summary(), indent=2))
        return
    table = Table("outcome", "kept for (days, default)", verb)
    for state, outcome in OUTCOME_OF_STATE.items():
        table.add_row(state.lower(), str(policy.days(outcome)), str(report.by_state[state]))
    console.print(table)
    console.print(
        f"{verb} {report.deleted} of {report.examined} finished runs examined "
        f"({report.kept} kept by a tenant's longer retention) across {len(report.by_tenant)} tenants "
        f"in {report.seconds:.1f} s"
    )


async def _prune(room: Services, dry_run: bool, progress: Any) -> PruneReport:
    try:
        return await room.tenants.prune_runs(dry_run=dry_run, progress=progress)
    finally:
        await room.prefect.close()


def _control(room: Services, tenant: str, operation_id: str, action: str, yes: bool) -> None:
    if not yes and not typer.confirm(f"{action} {operation_id} of {tenant}?"):
        raise typer.Abort()
    outcome = room.operations.control(CLI_OPERATOR, tenant, operation_id, action, confirm=True)
    room.handoff.flush()
    console.print(f"operation {operation_id}: {outcome.body['status']} ({action} asked)")


YES = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]


@runs_app.command("pause")
def pause(tenant: str, operation_id: str, yes: YES = False) -> None:
    """Stop the run at its next step boundary (a queued one before it starts)."""
    _control(services(), tenant, operation_id, "pause", yes)


@runs_app.command("resume")
def resume(tenant: str, operation_id: str, yes: YES = False) -> None:
    """Let a paused run go on; its completed steps are not redone."""
    _control(services(), tenant, operation_id, "resume", yes)


@runs_app.command("terminate")
def terminate(tenant: str, operation_id: str, yes: YES = False) -> None:
    """End the operation cancelled (a running run is stopped by its worker)."""
    _control(services(), tenant, operation_id, "terminate", yes)


@runs_app.command("restart")
def restart(
    tenant: str,
    operation_id: str,
    from_step: Annotated[
        str | None, typer.Option("--from-step", help="Run this step and every later one again.")
    ] = None,
    yes: YES = False,
    wait: Annotated[bool, typer.Option(help="Follow it to the end.")] = False,
    timeout: Annotated[float, typer.Option()] = 300,
) -> None:
    """Run a settled operation again, from the top or from a named step (the steps before it stay cached)."""
    room = services()
    where = f"from {from_step}" if from_step else "from the top"
    if not yes and not typer.confirm(f"restart {operation_id} of {tenant} {where}?"):
        raise typer.Abort()
    outcome = room.operations.restart(CLI_OPERATOR, tenant, operation_id, from_step=from_step, confirm=True)
    room.handoff.flush()
    console.print(f"operation {operation_id}: {outcome.body['status']} (restart {outcome.body['restart']} {where})")
    if wait:
        follow(room, tenant, [operation_id], timeout)


@runs_app.command("event")
def event(
    tenant: str,
    operation_id: str,
    event_type: Annotated[str, typer.Argument(metavar="TYPE")],
    payload: Annotated[str, typer.Option(help="The event's payload, as JSON.")] = "null",
) -> None:
    """Send an event to the operation's wait_for_event (kept until the wait consumes it)."""
    room = services()
    try:
        body = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"--payload is not JSON: {exc}") from None
    outcome = room.operations.send_event(CLI_OPERATOR, tenant, operation_id, event_type, body)
    room.handoff.flush()
    console.print(f"operation {operation_id}: event {event_type} kept ({outcome.body['status']})")


async def _read_run(room: Services, flow_run_id: str) -> dict[str, Any] | None:
    try:
        run = await room.prefect.read_run(flow_run_id)
        if run is None:
            return {"id": flow_run_id, "name": "?", "state": "unknown to Prefect", "work_queue_name": "?", "tags": []}
        return {
            "id": run.id,
            "name": run.name,
            "state": run.state_name,
            "work_queue_name": run.work_queue_name,
            "tags": list(run.tags),
            "expected_start_time": run.expected_start_time,
            "total_run_time": run.total_run_time_seconds,
        }
    except Exception as exc:
        return {"id": flow_run_id, "name": "?", "state": f"unreachable ({exc})", "work_queue_name": "?", "tags": []}


__all__ = ["operations_app", "runs_app"]
