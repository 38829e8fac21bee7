"""Document revisions: each query and command built once, for the API, the dashboard and the CLI alike."""

from __future__ import annotations

from typing import Any

from control_plane.auth import Principal
from control_plane.commands import Command, CommandGate
from dispatch.runtime import CommandResult, RuntimeClient
from dispatch.runtime import retention as r
from dispatch.runtime import versions as v


class RevisionService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def list(
        self, principal: Principal, tenant: str, document_id: str, *, limit: int = 100, offset: int = 0
    ) -> list[v.RevisionOut]:
        """The document's versions, newest first (bodies left out)."""
        reader = self.gate.reader(principal, tenant)
        found: list[v.RevisionOut] = self.runtime.query(
            tenant, reader, v.ListRevisions(document_id=document_id, limit=limit, offset=offset)
        )
        return found

    def get(self, principal: Principal, tenant: str, document_id: str, version: int) -> v.RevisionOut:
        """One version, with its body (read back from the store if it was spilled)."""
        reader = self.gate.reader(principal, tenant)
        found: v.RevisionOut = self.runtime.query(
            tenant, reader, v.GetRevision(document_id=document_id, version=version)
        )
        return found

    def diff(
        self, principal: Principal, tenant: str, document_id: str, from_version: int, to_version: int
    ) -> v.RevisionDiffOut:
        """A word-level diff of two versions (title and body; slug and kind when they changed)."""
        reader = self.gate.reader(principal, tenant)
        found: v.RevisionDiffOut = self.runtime.query(
            tenant, reader, v.DiffRevisions(document_id=document_id, from_version=from_version, to_version=to_version)
        )
        return found

    def restore(
        self,
        principal: Principal,
        tenant: str,
        document_id: str,
        version: int,
        *,
        publish: bool = False,
        confirm: bool = False,
        expected_version: int | None = None,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        """A new version with the old one's content; with ``publish`` it goes public through the publish path."""
        message = v.RestoreRevision(
            document_id=document_id, version=version, publish=publish, expected_version=expected_version
        )
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "content.publish" if publish else "content.edit",
                f"documents.restore:{document_id}",
                message,
                confirm=confirm if publish else None,
                idempotency_key=idempotency_key,
                counts_as_publish=publish,
            ),
        )


class RetentionService:
    def __init__(self, gate: CommandGate, runtime: RuntimeClient) -> None:
        self.gate = gate
        self.runtime = runtime

    def get(self, principal: Principal, tenant: str) -> dict[str, Any]:
        """The retention policy of each versioned entity type, and spillover waiting to be deleted."""
        found: dict[str, Any] = self.runtime.query(tenant, self.gate.reader(principal, tenant), r.GetRetention())
        return found

    def set_policy(
        self,
        principal: Principal,
        tenant: str,
        entity_type: str,
        *,
        keep_last: int,
        keep_days: int,
        idempotency_key: str | None = None,
    ) -> CommandResult:
        message = r.SetRetentionPolicy(entity_type=entity_type, keep_last=keep_last, keep_days=keep_days)
        return self.gate.execute(
            principal,
            Command(tenant, "site.admin", f"retention.set:{entity_type}", message, idempotency_key=idempotency_key),
        )

    def prune(
        self, principal: Principal, tenant: str, *, confirm: bool, idempotency_key: str | None = None
    ) -> CommandResult:
        """Queue prune_policies now (it also runs nightly); it deletes versions for good, so it asks to confirm."""
        return self.gate.execute(
            principal,
            Command(
                tenant,
                "site.admin",
                "retention.prune",
                r.RequestPrune(),
                confirm=confirm,
                idempotency_key=idempotency_key,
            ),
        )


__all__ = ["RetentionService", "RevisionService"]
