"""The typed workflow contract: every name accounted for, frozen models, additive fields, strict outcomes."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from tenant_runtime.errors import ClaimRejected
from tenant_runtime.workflows import (
    DEAD,
    FAILED,
    PLANNED,
    SUCCEEDED,
    WORKFLOWS,
    DocumentVersion,
    Failure,
    MemberOutcome,
    PublishBatchParameters,
    PublishDocumentParameters,
    RunOutcome,
    RunParameters,
    ScheduledPublishParameters,
    Workflow,
    parameters_from_run,
    run_parameters,
    spec,
    spec_for,
)

# The required fields of every model, as released. A new field must have a default (so a run created
# by an older release still validates): adding a required one fails here. Removing one is a breaking
# change for runs in flight and fails here too.
REQUIRED_FIELDS = {
    Workflow.PUBLISH_DOCUMENT: {"tenant", "operation_id", "document_id", "version"},
    Workflow.PUBLISH_BATCH: {"tenant", "operation_id", "members"},
    Workflow.UNPUBLISH_DOCUMENT: {"tenant", "operation_id", "document_id", "slug"},
    Workflow.DELIVER_RELEASE: {"tenant", "operation_id"},
    Workflow.SCHEDULED_PUBLISH: {"tenant", "operation_id"},
    Workflow.SEED_EXAMPLE_SITE: {"tenant", "operation_id"},
    Workflow.REBUILD_SEARCH_INDEX: {"tenant", "operation_id"},
    Workflow.EXPORT_BACKUP: {"tenant", "operation_id", "backup_id"},
    Workflow.IMPORT_CONTENT: {"tenant", "operation_id", "source_tenant", "backup_id", "manifest_sha256"},
    Workflow.RESTORE_VERSION: {"tenant", "operation_id", "at", "snapshot_id"},
    Workflow.FAN_OUT_CHORE: {"chore"},
    Workflow.WRITE_ARTICLE: {"tenant", "operation_id", "brief_id", "lane", "pack_version", "graph_digest"},
    Workflow.INSTALL_PACKAGE: {"tenant", "operation_id", "name", "version"},
    Workflow.PRUNE_POLICIES: {"tenant", "operation_id"},
    Workflow.SWEEP_MEDIA: {"tenant", "operation_id"},
    Workflow.MIGRATE_FIELD: {"tenant", "operation_id"},
}


def _required(model: type[BaseModel]) -> set[str]:
    return {name for name, field in model.model_fields.items() if field.is_required()}


def test_every_name_is_built_or_planned_never_both() -> None:
    assert set(WORKFLOWS) | set(PLANNED) == set(Workflow)
    assert not set(WORKFLOWS) & set(PLANNED)
    assert {spec(w).workflow for w in WORKFLOWS} == set(WORKFLOWS)
    for planned in PLANNED:
        with pytest.raises(KeyError):
            spec(planned)


@pytest.mark.parametrize("workflow", sorted(WORKFLOWS))
def test_each_model_is_frozen_exact_and_its_required_fields_only_ever_shrink(workflow: Workflow) -> None:
    model = spec(workflow).parameters
    assert issubclass(model, RunParameters)
    assert model.model_config.get("frozen") is True and model.model_config.get("extra") == "forbid"
    assert _required(model) == REQUIRED_FIELDS[workflow], "new fields need defaults; see REQUIRED_FIELDS"


def test_each_model_belongs_to_one_workflow() -> None:
    models = [s.parameters for s in WORKFLOWS.values()]
    assert len(models) == len(set(models))
    parameters = PublishDocumentParameters(tenant="acme", operation_id="op_1", document_id="doc_1", version=2)
    assert spec_for(parameters).workflow == Workflow.PUBLISH_DOCUMENT


def test_parameters_cannot_change_and_refuse_unknown_fields() -> None:
    parameters = PublishDocumentParameters(tenant="acme", operation_id="op_1", document_id="doc_1", version=2)
    with pytest.raises(ValidationError):
        parameters.version = 3  # type: ignore[misc]
    with pytest.raises(ValidationError):
        PublishDocumentParameters(tenant="acme", operation_id="op_1", document_id="doc_1", version=2, lane="x")
    with pytest.raises(ValidationError):
        PublishDocumentParameters(tenant="acme", operation_id="op_1", document_id="doc_1", version=0)


def test_a_run_carries_its_parameters_under_one_name_and_decodes_back() -> None:
    parameters = ScheduledPublishParameters(
        tenant="acme", operation_id="op_1", documents=(DocumentVersion(document_id="doc_1", version=3),)
    )
    encoded = run_parameters(parameters)
    assert list(encoded) == ["params"] and encoded["params"]["documents"] == [{"document_id": "doc_1", "version": 3}]
    assert parameters_from_run(Workflow.SCHEDULED_PUBLISH, encoded) == parameters


def test_runs_and_records_from_before_the_contract_still_decode() -> None:
    # A release stored [document_id, version] pairs; a batch run passed flat lists.
    old = {"tenant": "acme", "operation_id": "op_1", "documents": [["doc_1", 3]], "theme": None}
    assert ScheduledPublishParameters.model_validate(old).documents == (
        DocumentVersion(document_id="doc_1", version=3),
    )
    batch = parameters_from_run(
        Workflow.PUBLISH_BATCH,
        {
            "tenant": "acme",
            "operation_id": "bat_1",
            "operations": ["op_1", "op_2"],
            "documents": [["doc_1", 1], ["doc_2", 4]],
            "generation": 9,
        },
    )
    assert isinstance(batch, PublishBatchParameters)
    assert [(m.operation_id, m.document_id, m.version) for m in batch.members] == [
        ("op_1", "doc_1", 1),
        ("op_2", "doc_2", 4),
    ]


@pytest.mark.parametrize(
    "workflow, raw",
    [
        (Workflow.PUBLISH_DOCUMENT, {"params": {"tenant": "acme", "operation_id": "op_1"}}),
        (
            Workflow.PUBLISH_DOCUMENT,
            {"params": {"tenant": "acme", "operation_id": "op_1", "document_id": "d", "version": "two"}},
        ),
        (Workflow.PUBLISH_BATCH, {"params": {"tenant": "acme", "operation_id": "bat_1", "members": []}}),
        (Workflow.EXPORT_BACKUP, {"params": {"tenant": "acme", "operation_id": "op_1"}}),
        (Workflow.SWEEP_MEDIA, {"params": {"tenant": "acme", "operation_id": "op_1", "batch": 0}}),
        ("no_such_flow", {"params": {}}),
    ],
)
def test_parameters_that_do_not_fit_are_a_claim_rejection(workflow: str, raw: dict[str, object]) -> None:
    with pytest.raises(ClaimRejected):
        parameters_from_run(workflow, raw)


def test_a_batch_carries_each_member_and_what_its_record_must_hold() -> None:
    batch = PublishBatchParameters.model_validate(
        {
            "tenant": "acme",
            "operation_id": "bat_1",
            "members": [{"operation_id": "op_1", "document_id": "doc_1", "version": 2}],
        }
    )
    [carried] = batch.carried("publish_batch")
    assert carried.operation_id == "op_1" and carried.workflow == "publish_document"
    assert carried.fields == {"tenant": "acme", "document_id": "doc_1", "version": 2}


def test_outcomes_carry_a_failure_exactly_when_failed_or_dead() -> None:
    failure = Failure(step="render_page", code="bad", message="cannot render")
    assert MemberOutcome(status=DEAD, failure=failure).failure == failure
    assert MemberOutcome(status=FAILED, failure=failure).status == "failed"
    with pytest.raises(ValidationError):
        MemberOutcome(status=DEAD)
    with pytest.raises(ValidationError):
        MemberOutcome(status=SUCCEEDED, failure=failure)
    with pytest.raises(ValidationError):
        RunOutcome(members={})
    with pytest.raises(ValidationError):
        RunOutcome.of("op_1", SUCCEEDED, blob=object())  # type: ignore[arg-type]  # facts are JSON
