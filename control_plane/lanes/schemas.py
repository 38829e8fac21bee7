"""Request schemas of briefs, lanes and packs (the views come from the runtime seam)."""

from __future__ import annotations

from typing import Annotated

import msgspec
from msgspec import Meta

from control_plane.http.schemas import Slug, Title, Version, reject_control
from dispatch.runtime.lanes import BriefOut, CostOut, LaneOut, PackOut

# The action layer (tenant_runtime.actions.briefs) checks the same rules, for the CLI and flows.
BriefId = Annotated[str, Meta(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")]
LaneName = Annotated[str, Meta(min_length=1, max_length=40)]
SourceUrl = Annotated[str, Meta(min_length=8, max_length=2000, pattern=r"^https?://")]
PackText = Annotated[str, Meta(min_length=1, max_length=4000)]


class BriefCreate(msgspec.Struct, forbid_unknown_fields=True):
    brief_id: BriefId
    lane: LaneName
    title: Title
    slug: Slug | None = None
    audience: Annotated[str, Meta(max_length=500)] | None = None
    sources: Annotated[list[SourceUrl], Meta(max_length=20)] = msgspec.field(default_factory=list)
    notes: Annotated[str, Meta(max_length=20_000)] = ""

    def __post_init__(self) -> None:
        reject_control("title", self.title)


class PackUpdate(msgspec.Struct, forbid_unknown_fields=True):
    version: Version  # the pack version you edited; another one is a version conflict
    voice: PackText | None = None
    audience: PackText | None = None
    avoid: Annotated[list[Annotated[str, Meta(min_length=1, max_length=200)]], Meta(max_length=50)] | None = None
    guidance: Annotated[str, Meta(max_length=4000)] | None = None


class LaneEnabled(msgspec.Struct, forbid_unknown_fields=True):
    enabled: bool


class GraphNode(msgspec.Struct, forbid_unknown_fields=True):
    id: Annotated[str, Meta(min_length=1, max_length=60)]
    step: Annotated[str, Meta(min_length=1, max_length=60)]
    after: list[str] | None = None


class PackFields(msgspec.Struct, forbid_unknown_fields=True):
    voice: PackText | None = None
    audience: PackText | None = None
    avoid: list[Annotated[str, Meta(min_length=1, max_length=200)]] | None = None
    guidance: Annotated[str, Meta(max_length=4000)] | None = None


class LaneInstall(msgspec.Struct, forbid_unknown_fields=True):
    """A lane with its own graph over registered steps (checked now; a broken one is refused, nothing written)."""

    name: Annotated[str, Meta(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9-]+$")]
    graph: Annotated[list[GraphNode], Meta(min_length=1, max_length=40)]
    source: Annotated[str, Meta(pattern=r"^[a-z0-9][a-z0-9._-]*@[0-9A-Za-z.+-]+$")] = "operator@1"
    pack: PackFields | None = None
    override: bool = False  # operators only: install a graph within one step of the backbone


class LaneApproval(msgspec.Struct, forbid_unknown_fields=True):
    required: bool  # an approval step before publish (an ``approval`` event to the operation decides)


class LaneBudget(msgspec.Struct, forbid_unknown_fields=True):
    budget_micros: Annotated[int, Meta(ge=0, le=10**12)] | None  # millionths of a dollar per run; null: default


__all__ = [
    "BriefCreate",
    "BriefOut",
    "CostOut",
    "GraphNode",
    "LaneApproval",
    "LaneBudget",
    "LaneEnabled",
    "LaneInstall",
    "LaneOut",
    "PackOut",
    "PackUpdate",
]
