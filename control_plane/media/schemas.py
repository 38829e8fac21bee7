"""Schemas of the media library."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

import msgspec
from litestar.datastructures import UploadFile
from msgspec import Meta

from dispatch.runtime import MediaOut, MediaPolicyOut

MediaState = Literal["active", "deleted", "all"]


@dataclass
class MediaUpload:
    """The multipart form of an upload: one part named ``file`` (its filename becomes the media's name)."""

    file: UploadFile


class MediaPolicyUpdate(msgspec.Struct, forbid_unknown_fields=True):
    """The operator's limits for one tenant; a field left out keeps its value."""

    max_bytes: Annotated[int, Meta(ge=1, le=1024 * 1024 * 1024)] | None = None
    retention_days: Annotated[int, Meta(ge=0, le=3650)] | None = None


__all__ = ["MediaOut", "MediaPolicyOut", "MediaPolicyUpdate", "MediaState", "MediaUpload"]
