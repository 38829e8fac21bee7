"""What an uploaded file is, told from its bytes (never its name or the client's Content-Type).

The allowed types and their signatures are below; an image is also opened with
Pillow, which must agree on the format and read its size, so a PNG header on
anything else is refused. SVG is refused: it is a document that can run script.
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

from PIL import Image

from tenant_runtime.errors import BadRequest, UnsupportedMediaType

# Pillow's own decompression-bomb guard, made an error: a tiny file claiming gigapixels is refused.
MAX_IMAGE_PIXELS = 50_000_000

# content type -> Pillow's format name, for the types that are images.
_IMAGE_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/gif": "GIF", "image/webp": "WEBP"}
ALLOWED_TYPES = (*_IMAGE_FORMATS, "application/pdf", "video/mp4", "video/webm", "audio/mpeg")
_MP4_BRANDS = (b"isom", b"iso2", b"mp41", b"mp42", b"avc1", b"M4V ", b"dash")


@dataclass(frozen=True)
class Sniffed:
    content_type: str
    width: int | None = None
    height: int | None = None


def signature_type(head: bytes) -> str | None:
    """The allowed type whose magic bytes ``head`` starts with, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head[4:8] == b"ftyp" and head[8:12] in _MP4_BRANDS:
        return "video/mp4"
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return "video/webm"
    if head.startswith(b"ID3") or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):
        return "audio/mpeg"
    return None


def sniff(data: bytes) -> Sniffed:
    """The type of ``data`` (and an image's width and height); refused types are a 415, broken images a 400."""
    content_type = signature_type(data[:16])
    if content_type is None:
        raise UnsupportedMediaType(
            "This kind of file cannot be uploaded (told from its contents, not its name).",
            details={"allowed": list(ALLOWED_TYPES)},
            code="media_type_not_allowed",
        )
    image_format = _IMAGE_FORMATS.get(content_type)
    if image_format is None:
        return Sniffed(content_type)
    width, height = _image_size(data, image_format, content_type)
    return Sniffed(content_type, width, height)


def _image_size(data: bytes, image_format: str, content_type: str) -> tuple[int, int]:
    broken = BadRequest(
        f"The file starts like {content_type} but is not a readable image.",
        details={"content_type": content_type},
        code="invalid_media",
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data), formats=[image_format]) as image:
                width, height = image.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise broken
                image.verify()
    except BadRequest:
        raise
    except Exception:  # Pillow raises many kinds for broken input; all of them mean the same here
        raise broken from None
    return width, height


__all__ = ["ALLOWED_TYPES", "MAX_IMAGE_PIXELS", "Sniffed", "signature_type", "sniff"]
