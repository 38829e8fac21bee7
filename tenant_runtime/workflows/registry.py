"""Which workflows exist, what each one's operations are called, and how their runs carry parameters.

Every name of ``Workflow`` is either in ``WORKFLOWS`` (it has a parameters
model here, a flow in ``flows.FLOWS`` and a deployment registered by dispatch;
a test checks all three) or in ``PLANNED`` with the issue that builds it, never
both and never neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tenant_runtime.errors import ClaimRejected
from tenant_runtime.workflows.names import Workflow
from tenant_runtime.workflows.parameters import (
    DeliverReleaseParameters,
    ExportBackupParameters,
    FanOutChoreParameters,
    ImportContentParameters,
    InstallPackageParameters,
    MigrateFieldParameters,
    PrunePoliciesParameters,
    PublishBatchParameters,
    PublishDocumentParameters,
    RebuildSearchIndexParameters,
    RestoreVersionParameters,
    RunParameters,
    ScheduledPublishParameters,
    SeedExampleSiteParameters,
    SweepMediaParameters,
    UnpublishDocumentParameters,
    WriteArticleParameters,
)

# The one parameter every Pressroom flow takes: its workflow's model.
RUN_PARAMETER = "params"


@dataclass(frozen=True)
class WorkflowSpec:
    """One workflow: its parameters model, the kind of operation it delivers, its run key."""

    workflow: Workflow
    parameters: type[RunParameters]
    kind: str  # the operation's kind: what lists, quotas and the dashboard group by
    # Runs of operations committed by an action are keyed ``{key_prefix}:{parameters.run_key()}``
    # (the operation id, or for a brief its brief_id); None: the relay makes the run (a batch of
    # other operations, keyed ``batch:{id}``).
    key_prefix: str | None
    # Ends with the debounced aggregates step (home, sitemap, feeds): a newer such run in flight
    # is left to regenerate them (tenant_runtime.aggregates).
    refreshes_aggregates: bool = False
    # Runs for the platform, on the platform queue, carrying no operation (PlatformParameters).
    platform: bool = False
    # Its steps (task names) in the order a run reaches them: what describe lists and a restart
    # from a named step counts from (``Restart.epoch``). A test checks each is a task of its flow.
    steps: tuple[str, ...] = ()

    def idempotency_key(self, parameters: RunParameters) -> str:
        """The run's idempotency key: the one place any run key is derived."""
        return f"{self.key_prefix or self.workflow.value}:{parameters.run_key()}"


# The delivery pipeline (flows/pipeline.py): what a publish, a batch and a release run through.
DELIVERY_STEPS = (
    "verify",
    "render_page",
    "public_record",
    "index_search",
    "render_home",
    "purge",
    "refresh_aggregates",
    "purge_aggregates",
    "notify_plugins",
)
WITHDRAWAL_STEPS = (
    "verify_unpublished",
    "remove_page",
    "remove_record",
    "unindex_search",
    "render_home",
    "purge",
    "refresh_aggregates",
    "purge_aggregates",
)

WORKFLOWS: dict[Workflow, WorkflowSpec] = {
    spec.workflow: spec
    for spec in (
        WorkflowSpec(
            Workflow.PUBLISH_DOCUMENT,
            PublishDocumentParameters,
            "publish",
            "publish",
            refreshes_aggregates=True,
            steps=DELIVERY_STEPS,
        ),
        WorkflowSpec(
            Workflow.PUBLISH_BATCH,
            PublishBatchParameters,
            "publish",
            None,
            refreshes_aggregates=True,
            steps=DELIVERY_STEPS,
        ),
        WorkflowSpec(
            Workflow.UNPUBLISH_DOCUMENT,
            UnpublishDocumentParameters,
            "unpublish",
            "unpublish",
            refreshes_aggregates=True,
            steps=WITHDRAWAL_STEPS,
        ),
        WorkflowSpec(
            Workflow.DELIVER_RELEASE,
            DeliverReleaseParameters,
            "release",
            "release",
            refreshes_aggregates=True,
            steps=DELIVERY_STEPS,
        ),
        WorkflowSpec(
            Workflow.SCHEDULED_PUBLISH,
            ScheduledPublishParameters,
            "release",
            "release",
            # "approval": the wait of a release that needs sign-off (flows/events.wait_for_event)
            steps=("approval", "apply_release", *DELIVERY_STEPS),
        ),
        WorkflowSpec(Workflow.SEED_EXAMPLE_SITE, SeedExampleSiteParameters, "seed", "seed", steps=("seed_document",)),
        WorkflowSpec(
            Workflow.REBUILD_SEARCH_INDEX,
            RebuildSearchIndexParameters,
            "search_rebuild",
            "search-rebuild",
            steps=("rebuild_index",),
        ),
        WorkflowSpec(
            Workflow.EXPORT_BACKUP,
            ExportBackupParameters,
            "backup",
            "backup",
            steps=("take_snapshot", "dump_tables", "freeze_objects", "copy_objects", "write_manifest", "finish_backup"),
        ),
        WorkflowSpec(
            Workflow.WRITE_ARTICLE,
            WriteArticleParameters,
            "article",
            "brief",
            refreshes_aggregates=True,
            # the backbone's steps (a lane's own graph runs a subset, in its order)
            steps=(
                "load_graph",
                "validate",
                "ground",
                "generate",
                "fact_check",
                "clean",
                "persist",
                "index",
                "cover",
                "approve",
                "make_public",
            ),
        ),
        WorkflowSpec(
            Workflow.INSTALL_PACKAGE,
            InstallPackageParameters,
            "package",
            "package",
            steps=(
                "deactivate_package",
                "verify_package",
                "stage_package",
                "activate_package",
                "published_documents",
                *DELIVERY_STEPS,
            ),
        ),
        WorkflowSpec(
            Workflow.IMPORT_CONTENT,
            ImportContentParameters,
            "import",
            "import",
            steps=("verify_backup", "stage_tables", "swap_in", "place_objects", "render_site", "finish_import"),
        ),
        WorkflowSpec(
            Workflow.PRUNE_POLICIES,
            PrunePoliciesParameters,
            "prune",
            "prune",
            steps=("spill_bodies", "prune_versions", "delete_spillover"),
        ),
        WorkflowSpec(
            Workflow.SWEEP_MEDIA,
            SweepMediaParameters,
            "media_sweep",
            "sweep-media",
            steps=("find_expired", "scan_references", "purge_media", "purge"),
        ),
        WorkflowSpec(
            Workflow.RESTORE_VERSION,
            RestoreVersionParameters,
            "restore",
            "restore",
            refreshes_aggregates=True,
            steps=(
                "take_snapshot",
                "dump_tables",
                "freeze_objects",
                "copy_objects",
                "write_manifest",
                "finish_backup",
                "apply_restore",
                *DELIVERY_STEPS[:4],
                *WITHDRAWAL_STEPS,
                "notify_plugins",
            ),
        ),
        WorkflowSpec(
            Workflow.FAN_OUT_CHORE,
            FanOutChoreParameters,
            "chore",
            "chore",
            platform=True,
            steps=("list_tenants", "fan_out"),
        ),
        WorkflowSpec(
            Workflow.MIGRATE_FIELD,
            MigrateFieldParameters,
            "field_migration",
            "migrate-field",
            steps=("check_batch", "apply_batch", "finish_migration"),
        ),
    )
}

# Named in DESIGN.md, built by the open issues: no model, flow or deployment until then.
PLANNED: dict[Workflow, str] = {}

_BY_MODEL = {spec.parameters: spec for spec in WORKFLOWS.values()}
AGGREGATE_WORKFLOWS = tuple(w.value for w, spec in WORKFLOWS.items() if spec.refreshes_aggregates)


def spec(workflow: Workflow | str) -> WorkflowSpec:
    """The spec of a built workflow; anything else (unknown, or planned) is a KeyError."""
    return WORKFLOWS[Workflow(workflow)]


def spec_for(parameters: RunParameters) -> WorkflowSpec:
    """The workflow whose model ``parameters`` is."""
    return _BY_MODEL[type(parameters)]


def run_parameters(parameters: RunParameters) -> dict[str, Any]:
    """The Prefect run parameters of a run: the one ``params`` model, as JSON."""
    return {RUN_PARAMETER: parameters.model_dump(mode="json")}


def parameters_from_run(workflow: Workflow | str, run_parameters: Mapping[str, Any]) -> RunParameters:
    """Decode a run's parameters into its workflow's model; anything that does not fit is ClaimRejected."""
    try:
        model = spec(workflow).parameters
    except (KeyError, ValueError):
        raise ClaimRejected("The run is not of a Pressroom workflow.", details={"workflow": str(workflow)}) from None
    raw = run_parameters.get(RUN_PARAMETER)
    if raw is None:
        raw = _legacy(workflow, run_parameters)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ClaimRejected(
            "The run's parameters do not fit its workflow.", details={"workflow": str(workflow), "errors": _errors(exc)}
        ) from None


def _legacy(workflow: Workflow | str, flat: Mapping[str, Any]) -> dict[str, Any]:
    """Runs created before the typed contract passed flat parameters (a batch as two lists)."""
    if workflow == Workflow.PUBLISH_BATCH and "operations" in flat:
        members = [
            {"operation_id": op, "document_id": doc, "version": version}
            for op, (doc, version) in zip(flat.get("operations") or [], flat.get("documents") or [], strict=False)
        ]
        return {
            "tenant": flat.get("tenant"),
            "operation_id": flat.get("operation_id"),
            "members": members,
            "generation": flat.get("generation", 0),
        }
    return dict(flat)


def _errors(exc: ValidationError) -> list[dict[str, str]]:
    return [{"field": ".".join(str(p) for p in error["loc"]), "message": error["msg"]} for error in exc.errors()]


__all__ = [
    "AGGREGATE_WORKFLOWS",
    "PLANNED",
    "RUN_PARAMETER",
    "WORKFLOWS",
    "WorkflowSpec",
    "parameters_from_run",
    "run_parameters",
    "spec",
    "spec_for",
]
