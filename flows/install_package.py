"""install_package: verify → stage → activate (one transaction) → re-render what the site shows, if it changed.

The same run also switches back to an installed version (``action="activate"``,
a rollback: verified again, its files are staged already) and uninstalls
(``action="uninstall"``). ``verify_package`` has no retries: a bad signature, a
changed file or a key revoked since the upload is permanent at once, and
nothing is staged or registered. A theme the site is pinned to that changes
version (or a new pin) re-renders every published page and the home page
through the delivery pipeline (flows/rerender.py).
"""

from __future__ import annotations

from typing import Any

from prefect import flow, task
from pydantic import JsonValue

from flows.caching import CACHE_BY_STEP
from flows.policies import RETRY_IO, RETRY_NEVER
from flows.rerender import rerender_site
from flows.runtime import workspace
from flows.steps import run_step
from tenant_runtime.actions import packages
from tenant_runtime.workflows import SUCCEEDED, InstallPackageParameters, RunOutcome


@task(name="verify_package", **RETRY_NEVER.task_options(), **CACHE_BY_STEP)
async def verify_package(tenant: str, run_id: str, params: InstallPackageParameters) -> dict[str, Any]:
    """Verify the stored archive against the keys trusted now; the package it is."""

    def verify() -> dict[str, Any]:
        verified = packages.verify_stored(workspace(tenant), params)
        m = verified.manifest
        return {"package": m.ref, "kind": m.kind, "key_id": verified.key.key_id, "files": len(m.files)}

    return await run_step("verify_package", tenant, verify)


@task(name="stage_package", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def stage_package(tenant: str, run_id: str, params: InstallPackageParameters) -> int:
    """Write the version's files under packages/{name}/{version}/ in the tenant's store."""
    return await run_step("stage_package", tenant, lambda: packages.stage(workspace(tenant), params))


@task(name="activate_package", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def activate_package(tenant: str, run_id: str, params: InstallPackageParameters) -> dict[str, Any]:
    """The version active, the previous one inactive, contributions registered, the pin: one transaction."""
    return await run_step("activate_package", tenant, lambda: packages.activate(workspace(tenant), params))


@task(name="deactivate_package", **RETRY_IO.task_options(), **CACHE_BY_STEP)
async def deactivate_package(tenant: str, run_id: str, params: InstallPackageParameters) -> dict[str, Any]:
    """Every version of the package off, its contributions unregistered: one transaction."""
    return await run_step("deactivate_package", tenant, lambda: packages.deactivate(workspace(tenant), params))


@flow(
    name="install_package",
    flow_run_name="package {params.action} {params.tenant}/{params.name}@{params.version}",
    persist_result=False,
)
async def install_package(params: InstallPackageParameters) -> RunOutcome:
    """verify → stage → activate → re-render (install, rollback); deactivate (uninstall)."""
    tenant, run_id = params.tenant, params.operation_id
    if params.action == "uninstall":
        done = await deactivate_package(tenant, run_id, params)
        return RunOutcome(members=RunOutcome.of(run_id, SUCCEEDED).members, facts=done)
    verified = await verify_package(tenant, run_id, params)
    staged = await stage_package(tenant, run_id, params)
    activated = await activate_package(tenant, run_id, params)
    facts: dict[str, JsonValue] = {**verified, "staged": staged, **activated}
    if activated["site_changed"]:
        facts["rerendered"] = await rerender_site(tenant, run_id)
    return RunOutcome(members=RunOutcome.of(run_id, SUCCEEDED).members, facts=facts)


__all__ = ["install_package"]
