"""What lane steps reach outside the tenant: the text provider, the embedder, the cover renderer, their settings.

One of each per process, built from ``LaneSettings`` on first use; tests and
benchmarks replace them with ``configure``.
"""

from __future__ import annotations

from tenant_runtime.lanes.cover import CoverProvider, PillowCover
from tenant_runtime.lanes.embeddings import Embedder, HashingEmbedder
from tenant_runtime.lanes.providers import TextProvider, build_provider
from tenant_runtime.lanes.settings import LaneSettings

_settings: LaneSettings | None = None
_provider: TextProvider | None = None
_embedder: Embedder | None = None
_cover: CoverProvider | None = None


def configure(
    settings: LaneSettings | None = None,
    *,
    provider: TextProvider | None = None,
    embedder: Embedder | None = None,
    cover: CoverProvider | None = None,
) -> None:
    """Set this process's lane settings and adapters (None: back to the defaults, built from settings)."""
    global _settings, _provider, _embedder, _cover
    _settings, _provider, _embedder, _cover = settings, provider, embedder, cover


def settings() -> LaneSettings:
    global _settings
    if _settings is None:
        _settings = LaneSettings.from_env()
    return _settings


def text_provider() -> TextProvider:
    global _provider
    if _provider is None:
        _provider = build_provider(settings())
    return _provider


def embedder() -> Embedder:
    global _embedder
    if _embedder is None:
        _embedder = HashingEmbedder()
    return _embedder


def cover_provider() -> CoverProvider:
    global _cover
    if _cover is None:
        _cover = PillowCover()
    return _cover


__all__ = ["configure", "cover_provider", "embedder", "settings", "text_provider"]
