"""Cover images: a provider interface; the default renders a title card with Pillow, offline."""

from __future__ import annotations

import hashlib
import io
import textwrap
from typing import Protocol

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1200, 630


class CoverProvider(Protocol):
    name: str

    def render(self, title: str, lane: str) -> bytes:
        """PNG bytes of the cover."""
        ...


class PillowCover:
    """A title card: a background colour derived from the lane, the title wrapped in white."""

    name = "pillow"

    def render(self, title: str, lane: str) -> bytes:
        shade = hashlib.sha256(lane.encode()).digest()
        background = (40 + shade[0] % 120, 40 + shade[1] % 120, 40 + shade[2] % 120)
        image = Image.new("RGB", (WIDTH, HEIGHT), background)
        draw = ImageDraw.Draw(image)
        font = ImageFont.load_default(size=56)
        y = 180
        for line in textwrap.wrap(title, width=34)[:5]:
            draw.text((80, y), line, fill=(255, 255, 255), font=font)
            y += 72
        draw.text((80, HEIGHT - 90), lane.upper(), fill=(230, 230, 230), font=ImageFont.load_default(size=32))
        out = io.BytesIO()
        image.save(out, format="PNG", optimize=False)
        return out.getvalue()


__all__ = ["HEIGHT", "WIDTH", "CoverProvider", "PillowCover"]
