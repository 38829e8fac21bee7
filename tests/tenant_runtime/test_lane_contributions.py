"""What a package's lane contribution must be before anything is installed."""

from __future__ import annotations

import pytest

from tenant_runtime.lanes.contributions import check_lane_contribution
from tenant_runtime.lanes.graph import GraphRefused
from tenant_runtime.lanes.reference import RESEARCH_GRAPH


def test_the_research_lane_is_a_valid_contribution() -> None:
    lane = check_lane_contribution({"name": "research", "graph": list(RESEARCH_GRAPH), "pack": {"voice": "Careful."}})
    assert lane.name == "research" and [n["id"] for n in lane.graph][2] == "ground_links"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ({"name": "x", "graph": [n for n in RESEARCH_GRAPH if n["step"] != "generate"]}, "lane_graph_invalid"),
        ({"name": "x y", "graph": list(RESEARCH_GRAPH)}, "invalid_lane"),
        ({"name": "x", "graph": list(RESEARCH_GRAPH), "pack": {"tone": "loud"}}, "invalid_pack"),
        ({"name": "x", "graph": list(RESEARCH_GRAPH), "steps": []}, "lane_graph_invalid"),
        ("research", "lane_graph_invalid"),
    ],
)
def test_a_bad_contribution_is_refused_with_a_code(data: object, code: str) -> None:
    with pytest.raises(Exception) as refused:
        check_lane_contribution(data)
    assert getattr(refused.value, "code", None) == code


def test_a_missing_input_names_the_step_and_field() -> None:
    graph = [n for n in RESEARCH_GRAPH if n["step"] != "generate"]
    with pytest.raises(GraphRefused) as refused:
        check_lane_contribution({"name": "x", "graph": graph})
    assert refused.value.details["node"] == "fact_check" and refused.value.details["missing"] == ["draft"]
