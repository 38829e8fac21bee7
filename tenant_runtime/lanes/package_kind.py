"""The ``lane`` package kind: a signed package contributes lanes with their own graphs, checked at install.

``contributions`` is ``{"lanes": [{"name", "graph", "pack"?}]}``. ``validate``
runs every lane through ``check_lane_contribution`` before anything of the
package is written, so a graph that breaks a contract is refused naming the
step and the missing field (``lane_graph_invalid``), and one within one step of
the backbone is refused (``lane_graph_too_close``) unless the install options
carry ``{"override_lane_rules": true}`` (an operator's install). ``install``
registers each lane (source ``<package>@<version>``) in the activation
transaction, remembering what it replaced; ``uninstall`` (or a switch to
another version) puts that back, or disables a lane the package added (briefs
accepted on it keep their pinned graph).
"""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from tenant_runtime.actions.lanes import install_lane
from tenant_runtime.errors import PackageRejected, PressroomError
from tenant_runtime.ids import utcnow
from tenant_runtime.lanes.contributions import LaneContribution, check_lane_contribution
from tenant_runtime.lanes.graph import digest
from tenant_runtime.packages.kinds import ContentKind, PackageCheck, register_kind
from tenant_runtime.workspace import Actor, Workspace
from tenant_runtime.workspace.lane_models import Lane
from tenant_runtime.workspace.package_models import InstalledPackage

MAX_LANES = 10
OVERRIDE_OPTION = "override_lane_rules"


def _lanes(contributions: Any, *, override: bool, ref: str) -> list[LaneContribution]:
    entries = contributions.get("lanes") if isinstance(contributions, dict) else None
    if not isinstance(entries, list) or not 0 < len(entries) <= MAX_LANES:
        raise PackageRejected(
            f'A lane package contributes {{"lanes": [{{"name", "graph", "pack"?}}]}} (1-{MAX_LANES} lanes).',
            details={"package": ref},
            code="lane_graph_invalid",
        )
    checked = []
    for entry in entries:
        try:
            checked.append(check_lane_contribution(entry, override=override))
        except PressroomError as exc:
            lane = entry.get("name") if isinstance(entry, dict) else None
            raise PackageRejected(
                f"Lane {lane!r} of {ref}: {exc.message}",
                details={"package": ref, "lane": lane, **exc.details},
                code=exc.code if exc.code.startswith("lane_") else "lane_graph_invalid",
            ) from None
    return checked


def validate_lane_package(check: PackageCheck) -> None:
    override = bool(check.options.get(OVERRIDE_OPTION, False))
    _lanes(dict(check.manifest.contributions), override=override, ref=check.manifest.ref)


def _actor(package: InstalledPackage) -> Actor:
    return Actor.for_role(f"package:{package.ref}", "system")


def install_lane_package(tx: Session, ws: Workspace, package: InstalledPackage) -> None:
    # validate ran (with the install's options) before the package was written; the contract check runs
    # again inside install_lane, and the one-step rule was decided then.
    lanes = _lanes(dict(package.manifest.get("contributions", {})), override=True, ref=package.ref)
    replaced: dict[str, Any] = {}
    for lane in lanes:
        before = tx.get(Lane, lane.name)
        replaced[lane.name] = (
            {"graph": before.graph, "source": before.source, "enabled": before.enabled} if before else None
        )
        installed = install_lane(
            tx, _actor(package), lane.name, lane.graph, source=package.ref, pack=lane.pack, override=True
        )
        installed.enabled = True
        tx.add(installed)
    package.registrations = {**package.registrations, "lanes": replaced}


def uninstall_lane_package(tx: Session, ws: Workspace, package: InstalledPackage) -> None:
    for name, before in dict(package.registrations.get("lanes", {})).items():
        lane = tx.get(Lane, name)
        if lane is None or lane.source != package.ref:
            continue  # another package (or version) owns it now
        if before is None:
            lane.enabled = False
        else:
            lane.graph, lane.source, lane.enabled = before["graph"], before["source"], before["enabled"]
            lane.graph_digest = digest(lane.graph)
        lane.updated_at = utcnow()
        tx.add(lane)


LANE_KIND = register_kind(
    ContentKind("lane", validate_lane_package, install_lane_package, uninstall_lane_package), replace=True
)

__all__ = ["LANE_KIND", "OVERRIDE_OPTION", "install_lane_package", "uninstall_lane_package", "validate_lane_package"]
