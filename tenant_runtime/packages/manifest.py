"""A package's manifest: what it is, every file with its sha256, what it contributes; and its canonical bytes.

The signature covers ``canonical(manifest)``: the manifest's JSON object with
sorted keys, no insignificant whitespace, UTF-8. Reformatting ``manifest.json``
changes nothing; changing any value (a file's hash above all) breaks the
signature.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import Field, JsonValue, ValidationError, field_validator

from tenant_runtime.errors import PackageRejected
from tenant_runtime.packages.archive import check_path
from tenant_runtime.workflows.parameters import Frozen

FORMAT = 1
PACKAGE_NAME = re.compile(r"[a-z][a-z0-9-]{1,62}")
# Semantic versions: 1.2.3, with an optional pre-release (1.2.3-rc.1).
VERSION = re.compile(r"(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})(-[0-9A-Za-z.-]{1,32})?")
Kind = Literal["theme", "plugin", "lane"]


class PackageFile(Frozen):
    path: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int = Field(ge=0)

    @field_validator("path")
    @classmethod
    def _safe(cls, value: str) -> str:
        return check_path(value)


class Manifest(Frozen):
    """``manifest.json``: name, version, kind, every file with its sha256, and its contributions."""

    format: Literal[1] = 1
    name: str = Field(pattern=PACKAGE_NAME.pattern)
    version: str = Field(pattern=VERSION.pattern)
    kind: Kind
    description: str = Field("", max_length=500)
    files: tuple[PackageFile, ...] = ()
    # What the package adds, read by its kind (tenant_runtime.packages.kinds): e.g. a lane's graph.
    contributions: dict[str, JsonValue] = Field(default_factory=dict)

    @field_validator("files")
    @classmethod
    def _unique(cls, value: tuple[PackageFile, ...]) -> tuple[PackageFile, ...]:
        paths = [f.path for f in value]
        if len(paths) != len(set(paths)):
            raise ValueError("a path is listed twice")
        return value

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


def canonical(document: Any) -> bytes:
    """The bytes a signature covers: sorted keys, compact separators, UTF-8, no NaN."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def parse_json_object(data: bytes, what: str) -> dict[str, Any]:
    """``data`` as a JSON object; anything else is ``package_invalid`` naming ``what``."""
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise PackageRejected(f"{what} is not valid JSON.", details={"file": what}, code="package_invalid") from None
    if not isinstance(document, dict):
        raise PackageRejected(f"{what} must hold a JSON object.", details={"file": what}, code="package_invalid")
    return document


def manifest_from(document: dict[str, Any]) -> Manifest:
    """The manifest model of a (signed) manifest object; a shape that does not fit is ``package_invalid``."""
    try:
        return Manifest.model_validate(document)
    except ValidationError as exc:
        errors = [
            {"field": ".".join(str(p) for p in e["loc"]), "message": e["msg"]} for e in exc.errors(include_url=False)
        ]
        raise PackageRejected(
            "manifest.json does not describe a package.", details={"errors": errors[:20]}, code="package_invalid"
        ) from None


def manifest_for(files: dict[str, bytes], **fields: Any) -> dict[str, Any]:
    """A manifest object listing ``files`` with their hashes (what ``pressroom packages sign`` writes)."""
    listed = [{"path": p, "sha256": hashlib.sha256(files[p]).hexdigest(), "size": len(files[p])} for p in sorted(files)]
    return manifest_from({**fields, "files": listed}).model_dump(mode="json")


__all__ = [
    "FORMAT",
    "PACKAGE_NAME",
    "VERSION",
    "Kind",
    "Manifest",
    "PackageFile",
    "canonical",
    "manifest_for",
    "manifest_from",
    "parse_json_object",
]
