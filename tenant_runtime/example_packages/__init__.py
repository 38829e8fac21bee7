"""Packages shipped with Pressroom: the example site's second theme, signed by the example publisher's key.

``magazine/`` is the theme's source (``package.json`` and its templates);
``magazine-1.0.0.tar.gz`` is that directory signed with ``pressroom packages sign``
by the example publisher, whose public key is ``example-publisher.pub`` (its
private key is not kept anywhere: a new version is signed by a new key).
``make up`` trusts that key for the example tenant and installs the theme, so
a release with ``"theme": "magazine"`` switches the site to it.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
EXAMPLE_THEME = HERE / "magazine-1.0.0.tar.gz"
EXAMPLE_THEME_SOURCE = HERE / "magazine"
EXAMPLE_PUBLISHER_KEY = (HERE / "example-publisher.pub").read_text().strip()

__all__ = ["EXAMPLE_PUBLISHER_KEY", "EXAMPLE_THEME", "EXAMPLE_THEME_SOURCE"]
