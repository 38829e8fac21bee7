"""Lane graphs are checked when installed: every step known, no cycle, every input met by an earlier output."""

from __future__ import annotations

import pytest

from tenant_runtime.lanes.graph import (
    BACKBONE,
    GraphRefused,
    backbone_graph,
    check,
    check_own_graph,
    difference_from_backbone,
    digest,
    with_approval,
)

RESEARCH = [
    {"id": "validate", "step": "validate"},
    {"id": "ground", "step": "ground"},
    {"id": "ground_again", "step": "ground"},
    {"id": "generate", "step": "generate"},
    {"id": "fact_check", "step": "fact_check"},
    {"id": "clean", "step": "clean"},
    {"id": "persist", "step": "persist"},
    {"id": "index", "step": "index"},
    {"id": "cover", "step": "cover"},
    {"id": "publish", "step": "publish"},
]


def test_the_backbone_passes_its_own_check_in_order() -> None:
    assert [n.id for n in check(backbone_graph())] == list(BACKBONE)


def test_a_research_graph_with_a_second_grounding_round_and_a_fact_check_is_accepted() -> None:
    assert [n.id for n in check_own_graph(RESEARCH)] == [n["id"] for n in RESEARCH]
    assert difference_from_backbone(RESEARCH) == 2


def test_a_missing_input_is_refused_naming_the_step_and_the_field() -> None:
    broken = [n for n in backbone_graph() if n["step"] != "clean"]  # persist needs body, which clean gives
    with pytest.raises(GraphRefused) as refused:
        check(broken)
    assert refused.value.details["node"] == "persist" and refused.value.details["missing"] == ["body"]
    assert "'persist' needs body" in refused.value.message


def test_an_input_given_only_by_a_later_step_is_refused() -> None:
    swapped = backbone_graph()
    swapped[2], swapped[3] = swapped[3], swapped[2]  # clean before generate
    with pytest.raises(GraphRefused) as refused:
        check(swapped)
    assert refused.value.details == {"node": "clean", "step": "clean", "missing": ["draft"]}


def test_unknown_steps_duplicates_dangling_edges_and_cycles_are_refused() -> None:
    with pytest.raises(GraphRefused, match="unknown step 'translate'"):
        check([*backbone_graph(), {"id": "translate", "step": "translate"}])
    with pytest.raises(GraphRefused, match="appears twice"):
        check([*backbone_graph(), {"id": "cover", "step": "cover"}])
    with pytest.raises(GraphRefused, match="not in the graph"):
        check([{"id": "validate", "step": "validate", "after": ["nowhere"]}])
    cycle = [
        {"id": "validate", "step": "validate", "after": ["ground"]},
        {"id": "ground", "step": "ground", "after": ["validate"]},
    ]
    with pytest.raises(GraphRefused, match="cycle"):
        check(cycle)
    for malformed in ([], [{"step": 3}], ["validate"], [{"id": "v", "step": "validate", "extra": 1}]):
        with pytest.raises(GraphRefused):
            check(malformed)  # type: ignore[arg-type]


def test_a_graph_within_one_step_of_the_backbone_is_refused_unless_the_operator_overrides() -> None:
    one_more = [*backbone_graph()[:3], {"id": "fact_check", "step": "fact_check"}, *backbone_graph()[3:]]
    with pytest.raises(GraphRefused) as refused:
        check_own_graph(one_more)
    assert refused.value.code == "lane_graph_too_close"
    assert [n.id for n in check_own_graph(one_more, override=True)][3] == "fact_check"


def test_the_digest_is_canonical_and_changes_with_the_graph() -> None:
    reordered_keys = [{"step": n["step"], "id": n["id"]} for n in backbone_graph()]
    assert digest(reordered_keys) == digest(backbone_graph())
    assert digest(RESEARCH) != digest(backbone_graph())


def test_an_approval_step_is_a_branch_before_publish_not_a_graph_of_its_own() -> None:
    approved = with_approval(backbone_graph(), True)
    assert [n.id for n in check(approved)][-2:] == ["approve", "publish"]
    assert difference_from_backbone(approved) == 0
    assert with_approval(approved, False) == backbone_graph()
    assert with_approval(with_approval(approved, True), True) == approved
