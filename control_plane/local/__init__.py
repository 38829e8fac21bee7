"""The local development stack: embedded PostgreSQL, the Prefect server, and ``pressroom up``.

Nothing in this package imports Prefect: the Prefect server is a child process.

- ``postgres`` / ``pg_user`` / ``pg_binaries`` — the embedded PostgreSQL cluster, the OS user it
  runs as, and its binaries staged where that user can run them
- ``prefect_server`` — ``prefect server start`` and the Prefect settings every process shares
- ``supervisor`` / ``restart_policy`` / ``events`` — a generic supervisor of child processes,
  when it restarts them, and its event log
- ``processes`` / ``ports`` — pids, signals, parent-death signals; free and taken ports
- ``stack`` / ``example_site`` — ``pressroom up`` itself
"""

from __future__ import annotations

from control_plane.local.errors import CrashLoop, DataDirUnreachable, LocalServerError, PortTaken
from control_plane.local.events import EventLog
from control_plane.local.ports import (
    PortHolder,
    PortWanted,
    check_ports_free,
    ephemeral_port_range,
    free_port,
    port_holder,
    port_is_free,
)
from control_plane.local.postgres import (
    EmbeddedPostgres,
    PostgresHandle,
    check_data_dir_access,
    ensure_external_database,
    start_embedded_postgres,
)
from control_plane.local.prefect_server import (
    PrefectServerHandle,
    http_ok,
    prefect_env,
    start_prefect_server,
    wait_healthy,
)
from control_plane.local.processes import describe_exit, parent_death_signal, pid_alive, signal_and_wait
from control_plane.local.supervisor import ChildSpec, RestartPolicy, StopRequested, Supervisor, run_supervised

__all__ = [
    "ChildSpec",
    "CrashLoop",
    "DataDirUnreachable",
    "EmbeddedPostgres",
    "EventLog",
    "LocalServerError",
    "PortHolder",
    "PortTaken",
    "PortWanted",
    "PostgresHandle",
    "PrefectServerHandle",
    "RestartPolicy",
    "StopRequested",
    "Supervisor",
    "check_data_dir_access",
    "check_ports_free",
    "describe_exit",
    "ensure_external_database",
    "ephemeral_port_range",
    "free_port",
    "http_ok",
    "parent_death_signal",
    "pid_alive",
    "port_holder",
    "port_is_free",
    "prefect_env",
    "run_supervised",
    "signal_and_wait",
    "start_embedded_postgres",
    "start_prefect_server",
    "wait_healthy",
]
