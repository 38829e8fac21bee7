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
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from control_plane.cli.common import CLI_OPERATOR, app, services
from control_plane.container import Services
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
    """An operation, its attempts and its Prefect flow run (state, queue, tags, link)."""
    room = services()
    operation = _operation(room, tenant, operation_id)
    run: dict[str, Any] | None = None
    if operation["flow_run_id"]:
        run = asyncio.run(_read_run(room, operation["flow_run_id"]))
    if as_json:
        typer.echo(json.dumps({"operation": operation, "flow_run": run}, default=str, indent=2))
        return
    console.print(f"[bold]{operation['id']}[/bold]  {operation['kind']}  [bold]{operation['status']}[/bold]")
    if operation["error"]:
        console.print(f"error: {operation['error']['code']}: {operation['error']['message']}")
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
    finally:
        await room.prefect.close()


__all__ = ["operations_app", "runs_app"]
