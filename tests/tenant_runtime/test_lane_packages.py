"""A signed lane package: its graph checked before anything is written, its lanes installed and uninstalled."""

from __future__ import annotations

import pytest
from sqlmodel import select

from tenant_runtime.actions import packages
from tenant_runtime.actions.briefs import BriefInput, submit_brief
from tenant_runtime.errors import PackageRejected
from tenant_runtime.lanes.graph import BACKBONE
from tenant_runtime.lanes.reference import RESEARCH_GRAPH
from tenant_runtime.workflows import InstallPackageParameters
from tenant_runtime.workspace import SYSTEM, Brief, InstalledPackage, Lane, Operation, Workspace
from tests.tenant_runtime.package_kit import Publisher


@pytest.fixture(scope="module")
def publisher() -> Publisher:
    return Publisher()


@pytest.fixture
def trusted(workspace: Workspace, publisher: Publisher) -> Workspace:
    with workspace.transaction() as tx:
        packages.add_key(tx, SYSTEM, publisher.public_key, name="publisher")
    return workspace


def _run(ws: Workspace, operation: Operation) -> dict[str, object]:
    """What the install_package flow does, step by step, without Prefect."""
    params = InstallPackageParameters.model_validate(operation.parameters)
    if params.action == "uninstall":
        return packages.deactivate(ws, params)
    packages.verify_stored(ws, params)
    packages.stage(ws, params)
    return packages.activate(ws, params)


def _lane_archive(publisher: Publisher, graph: list[dict[str, str]], name: str = "research") -> bytes:
    contributions = {"lanes": [{"name": name, "graph": graph, "pack": {"voice": "Careful."}}]}
    return publisher.archive(
        {"README.md": b"a lane"}, name="research-lane", version="1.0.0", kind="lane", contributions=contributions
    )


def test_a_research_lane_package_installs_its_graph_and_uninstall_disables_it(
    trusted: Workspace, publisher: Publisher
) -> None:
    with trusted.transaction() as tx:
        operation, _ = packages.request_install(tx, trusted, SYSTEM, _lane_archive(publisher, list(RESEARCH_GRAPH)))
    _run(trusted, operation)
    with trusted.reader() as tx:
        lane = tx.get(Lane, "research")
        assert lane is not None and lane.enabled and lane.source == "research-lane@1.0.0"
        assert [n["id"] for n in lane.graph] == [n["id"] for n in RESEARCH_GRAPH]
    with trusted.transaction() as tx:
        done = submit_brief(tx, trusted.tenant, SYSTEM, BriefInput(brief_id="r-1", lane="research", title="R"))
        assert [n["id"] for n in done.graph][2] == "ground_links"

    with trusted.transaction() as tx:
        uninstall = packages.request_uninstall(tx, trusted, SYSTEM, "research-lane")
    _run(trusted, uninstall)
    with trusted.reader() as tx:
        lane = tx.get(Lane, "research")
        assert lane is not None and not lane.enabled
        brief = tx.get(Brief, "r-1")
        assert brief is not None and [n["id"] for n in brief.graph][2] == "ground_links"  # pinned


def test_a_package_whose_graph_breaks_a_contract_is_refused_at_install_naming_the_step(
    trusted: Workspace, publisher: Publisher
) -> None:
    broken = [n for n in RESEARCH_GRAPH if n["step"] != "clean"]
    with trusted.transaction() as tx, pytest.raises(PackageRejected) as refused:
        packages.request_install(tx, trusted, SYSTEM, _lane_archive(publisher, broken))
    assert refused.value.code == "lane_graph_invalid"
    assert refused.value.details["node"] == "persist" and refused.value.details["missing"] == ["body"]
    assert "persist" in refused.value.message
    with trusted.reader() as tx:
        assert tx.get(Lane, "research") is None and list(tx.exec(select(InstalledPackage))) == []


def test_a_package_lane_within_one_step_of_the_backbone_needs_the_operators_override(
    trusted: Workspace, publisher: Publisher
) -> None:
    close = [{"id": s, "step": s} for s in (*BACKBONE[:3], "fact_check", *BACKBONE[3:])]
    archive = _lane_archive(publisher, close, name="checked-news")
    with trusted.transaction() as tx, pytest.raises(PackageRejected) as refused:
        packages.request_install(tx, trusted, SYSTEM, archive)
    assert refused.value.code == "lane_graph_too_close"
    with trusted.transaction() as tx:
        operation, _ = packages.request_install(tx, trusted, SYSTEM, archive, options={"override_lane_rules": True})
    _run(trusted, operation)
    with trusted.reader() as tx:
        lane = tx.get(Lane, "checked-news")
        assert lane is not None and [n["id"] for n in lane.graph][3] == "fact_check"
