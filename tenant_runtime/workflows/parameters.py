"""One frozen parameters model per workflow: what its run is asked to do.

The model is built by the action that commits the operation, stored on the
operation row, sent to Prefect as the run's one parameter (``params``), compared
by the claim before the run touches anything, and handed to the flow. Fields are
added later only with defaults, so a run created by an older release still
validates (``tests/tenant_runtime/test_workflows.py`` holds the required fields of
every model and fails when one is added without a default).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator


class Frozen(BaseModel):
    """Immutable, exact: an unknown field is an error, never silently dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class Carried(Frozen):
    """An operation a run carries, and what that operation's own record must hold for the run to claim it."""

    operation_id: str
    workflow: str
    fields: dict[str, Any]


class Restart(Frozen):
    """The restarts an operation has had: each from the top (None) or from a named step, oldest first.

    A step's cache key carries its *epoch*: how many restarts reached it (a restart from
    the top reaches every step, one from step k reaches k and every step after it). So
    a restart from k finds the steps before k in the cache and runs k onwards again.
    """

    from_steps: tuple[str | None, ...] = Field(min_length=1)

    @property
    def count(self) -> int:
        return len(self.from_steps)

    def then(self, from_step: str | None) -> Restart:
        return Restart(from_steps=(*self.from_steps, from_step))

    def epoch(self, step: str, order: tuple[str, ...]) -> int:
        """How many of the restarts run ``step`` again (a step the order does not name: all of them)."""
        if step not in order:
            return self.count
        at = order.index(step)
        return sum(1 for start in self.from_steps if start is None or start not in order or order.index(start) <= at)


class RunParameters(Frozen):
    """Base of every workflow's parameters: the tenant and the operation (or batch) the run is for.

    ``restart`` is set only on the run of a restarted operation (left out of the JSON otherwise,
    so the runs of operations that were never restarted carry exactly what they always did).
    """

    tenant: str
    operation_id: str
    restart: Restart | None = Field(default=None, exclude_if=lambda value: value is None)

    def run_key(self) -> str:
        """What the run's idempotency key is made of (after the workflow's prefix): the operation."""
        return self.operation_id

    def carried(self, workflow: str) -> tuple[Carried, ...]:
        """The operations this run carries; a run of one operation must match its whole record."""
        return (Carried(operation_id=self.operation_id, workflow=workflow, fields=self.model_dump(mode="json")),)


# The tenant a platform run is for: none (a run of the platform itself, e.g. a nightly fan-out).
PLATFORM_TENANT = "*"


class PlatformParameters(RunParameters):
    """Base of the workflows that run for the platform, not one tenant: no operation record to claim."""

    tenant: str = PLATFORM_TENANT
    operation_id: str = ""


class DocumentVersion(Frozen):
    """One immutable version of a document, as a delivery addresses it."""

    document_id: str
    version: int = Field(ge=1)

    @model_validator(mode="before")
    @classmethod
    def _from_pair(cls, value: Any) -> Any:
        # Releases committed before the typed contract stored ``[document_id, version]`` pairs.
        if isinstance(value, list | tuple) and len(value) == 2:
            return {"document_id": value[0], "version": value[1]}
        return value


class PublishDocumentParameters(RunParameters):
    document_id: str
    version: int = Field(ge=1)
    generation: int = 0


class UnpublishDocumentParameters(RunParameters):
    document_id: str
    slug: str
    generation: int = 0


class DeliveryItem(Frozen):
    """One document version a delivery makes public, and the operation it is delivered for."""

    operation_id: str
    document_id: str
    version: int = Field(ge=1)

    @property
    def key(self) -> str:
        """Unique within a run: a release delivers several documents for one operation."""
        return f"{self.operation_id}/{self.document_id}"


class PublishBatchParameters(RunParameters):
    """Several of one tenant's publishes in one run; ``operation_id`` is the batch id (``bat_…``)."""

    members: tuple[DeliveryItem, ...] = Field(min_length=1)
    generation: int = 0

    def carried(self, workflow: str) -> tuple[Carried, ...]:
        # Each member was committed as a publish_document operation; the batch run must name
        # its document version (its own generation may be older than the batch's).
        return tuple(
            Carried(
                operation_id=m.operation_id,
                workflow="publish_document",
                fields={"tenant": self.tenant, "document_id": m.document_id, "version": m.version},
            )
            for m in self.members
        )


class ReleaseParameters(RunParameters):
    """Document versions, and the site resources' versions, published together."""

    documents: tuple[DocumentVersion, ...] = ()
    navigation_version: int | None = None
    redirects_version: int | None = None
    theme: str | None = None
    theme_version: int = 0


class DeliverReleaseParameters(ReleaseParameters):
    """An immediate release: the command already made it public; the run delivers it."""

    generation: int = 0


class Approval(Frozen):
    """An editor's sign-off a scheduled release waits for (``flows/events.wait_for_event``) before it applies.

    Sent early, the approval is kept and the release goes at its time; not sent within
    ``timeout_seconds`` of the release's time, the release fails (``event_timeout``), unapplied.
    """

    event_type: str = Field(default="approval", pattern=r"^[a-zA-Z0-9_][a-zA-Z0-9-_]*$", max_length=200)
    timeout_seconds: float = Field(gt=0, le=90 * 24 * 3600)


class ScheduledPublishParameters(ReleaseParameters):
    """A scheduled release: the run applies it (if every expected version still holds), then delivers it."""

    approval: Approval | None = Field(default=None, exclude_if=lambda value: value is None)


class SeedExampleSiteParameters(RunParameters):
    """Give a fresh tenant example content to explore."""


class RebuildSearchIndexParameters(RunParameters):
    force: bool = False


class ExportBackupParameters(RunParameters):
    """Write backup ``backup_id`` (its catalog row was committed with the operation)."""

    backup_id: str
    reason: str = "manual"  # manual | nightly | restore


class ImportContentParameters(RunParameters):
    """Replace the site with backup ``backup_id`` of ``source_tenant`` (this tenant or another), pinned by the
    digest of its manifest when the import was asked for."""

    source_tenant: str
    backup_id: str
    manifest_sha256: str
    undo_of: str | None = None  # the restore this import takes back


class RestoreVersionParameters(RunParameters):
    """Put every versioned entity back to its state at ``at``, after taking snapshot ``snapshot_id``."""

    at: datetime
    snapshot_id: str


class FanOutChoreParameters(PlatformParameters):
    """One fire of a nightly chore: a date-keyed operation into the outbox of each tenant that needs it."""

    chore: str
    fire_at: datetime | None = None  # the fire this run stands for; None: the run's scheduled start


class MigrateFieldParameters(RunParameters):
    """Apply field migration ``operation_id`` (its ``field_migration`` row holds the change) to every document."""


class PrunePoliciesParameters(RunParameters):
    """Enforce the tenant's version retention; ``fire_date`` (YYYY-MM-DD, UTC) when a nightly fire asked."""

    fire_date: str | None = None


class WriteArticleParameters(RunParameters):
    """A brief turned into a published article by its lane's graph (pinned, by digest, when it was accepted)."""

    brief_id: str
    lane: str
    pack_version: int = Field(ge=1)
    graph_digest: str

    def run_key(self) -> str:
        # The brief, and only the brief: a routine that posts it again reaches the same run.
        return self.brief_id


class InstallPackageParameters(RunParameters):
    """Install a verified package version (``install``), switch back to an installed one (``activate``:
    rollback), or take a package off (``uninstall``). ``archive_sha256`` names the uploaded archive."""

    name: str
    version: str
    action: Literal["install", "activate", "uninstall"] = "install"
    archive_sha256: str = ""
    # A theme: switch the site's theme pin to it in the activation transaction.
    pin_theme: bool = False
    # Handed to the kind's check (e.g. a lane graph's operator override).
    options: dict[str, JsonValue] = Field(default_factory=dict)


class SweepMediaParameters(RunParameters):
    """Hard-delete files soft-deleted past retention that no kept document version references."""

    batch: int = Field(500, ge=1, le=5000)  # files looked at per run at most; the rest wait for the next
    fire_date: str | None = None  # the nightly chore's fire (YYYY-MM-DD, UTC); None when asked for


__all__ = [
    "PLATFORM_TENANT",
    "Approval",
    "Carried",
    "DeliverReleaseParameters",
    "DeliveryItem",
    "DocumentVersion",
    "ExportBackupParameters",
    "FanOutChoreParameters",
    "Frozen",
    "ImportContentParameters",
    "InstallPackageParameters",
    "MigrateFieldParameters",
    "PlatformParameters",
    "PrunePoliciesParameters",
    "PublishBatchParameters",
    "PublishDocumentParameters",
    "RebuildSearchIndexParameters",
    "ReleaseParameters",
    "Restart",
    "RestoreVersionParameters",
    "RunParameters",
    "ScheduledPublishParameters",
    "SeedExampleSiteParameters",
    "SweepMediaParameters",
    "UnpublishDocumentParameters",
    "WriteArticleParameters",
]
