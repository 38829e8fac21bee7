"""The typed workflow contract between actions, dispatch and flows.

names.py       Workflow: the name of every flow (the twelve, the batch and
               release deliveries, the lane flow)
parameters.py  one frozen parameters model per workflow (RunParameters and
               its subclasses); an action builds it, the operation row stores
               it, the relay sends it, the claim compares it, the flow takes it
outcomes.py    RunOutcome: what every run returns, one MemberOutcome per
               operation it carries; settlement reads it
registry.py    WORKFLOWS (built: model, operation kind, run key), PLANNED
               (named, built by an open issue), run-parameter encoding
"""

from tenant_runtime.workflows.names import Workflow
from tenant_runtime.workflows.outcomes import (
    DEAD,
    FAILED,
    SUCCEEDED,
    SUPERSEDED,
    Failure,
    MemberOutcome,
    MemberStatus,
    RunOutcome,
)
from tenant_runtime.workflows.parameters import (
    PLATFORM_TENANT,
    Approval,
    Carried,
    DeliverReleaseParameters,
    DeliveryItem,
    DocumentVersion,
    ExportBackupParameters,
    FanOutChoreParameters,
    ImportContentParameters,
    InstallPackageParameters,
    MigrateFieldParameters,
    PlatformParameters,
    PrunePoliciesParameters,
    PublishBatchParameters,
    PublishDocumentParameters,
    RebuildSearchIndexParameters,
    ReleaseParameters,
    Restart,
    RestoreVersionParameters,
    RunParameters,
    ScheduledPublishParameters,
    SeedExampleSiteParameters,
    SweepMediaParameters,
    UnpublishDocumentParameters,
    WriteArticleParameters,
)
from tenant_runtime.workflows.registry import (
    AGGREGATE_WORKFLOWS,
    PLANNED,
    RUN_PARAMETER,
    WORKFLOWS,
    WorkflowSpec,
    parameters_from_run,
    run_parameters,
    spec,
    spec_for,
)

__all__ = [
    "AGGREGATE_WORKFLOWS",
    "DEAD",
    "FAILED",
    "PLANNED",
    "PLATFORM_TENANT",
    "RUN_PARAMETER",
    "SUCCEEDED",
    "SUPERSEDED",
    "WORKFLOWS",
    "Approval",
    "Carried",
    "DeliverReleaseParameters",
    "DeliveryItem",
    "DocumentVersion",
    "ExportBackupParameters",
    "Failure",
    "FanOutChoreParameters",
    "ImportContentParameters",
    "InstallPackageParameters",
    "MemberOutcome",
    "MemberStatus",
    "MigrateFieldParameters",
    "PlatformParameters",
    "PrunePoliciesParameters",
    "PublishBatchParameters",
    "PublishDocumentParameters",
    "RebuildSearchIndexParameters",
    "ReleaseParameters",
    "Restart",
    "RestoreVersionParameters",
    "RunOutcome",
    "RunParameters",
    "ScheduledPublishParameters",
    "SeedExampleSiteParameters",
    "SweepMediaParameters",
    "UnpublishDocumentParameters",
    "Workflow",
    "WorkflowSpec",
    "WriteArticleParameters",
    "parameters_from_run",
    "run_parameters",
    "spec",
    "spec_for",
]
