"""Related articles through an embedding interface; the default embeds offline (hashed word counts).

Each article's vector is stored in the tenant's store under
``lanes/embeddings/{document_id}.json``; related articles are the nearest
stored vectors by cosine similarity.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Protocol

from tenant_runtime.workspace import Workspace

DIMENSIONS = 256
PREFIX = "lanes/embeddings/"
_WORD = re.compile(r"[a-z0-9]{3,}")


class Embedder(Protocol):
    name: str

    def embed(self, text: str) -> list[float]: ...


class HashingEmbedder:
    """Offline and deterministic: words hashed into buckets, the vector normalised."""

    name = "offline-hashing"

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * DIMENSIONS
        for word in _WORD.findall(text.lower()):
            bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % DIMENSIONS
            vector[bucket] += 1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [round(v / norm, 6) for v in vector]


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def index_related(
    ws: Workspace, document_id: str, slug: str, text: str, embedder: Embedder, limit: int = 3
) -> list[str]:
    """Store this article's vector; the slugs of the ``limit`` nearest other articles."""
    vector = embedder.embed(text)
    record = json.dumps({"slug": slug, "embedder": embedder.name, "vector": vector}).encode()
    key = f"{PREFIX}{document_id}.json"
    if ws.store.get(key) != record:
        ws.store.put(key, record)
    scored: list[tuple[float, str]] = []
    for other_key in ws.store.list(PREFIX):
        if other_key.endswith(f"/{document_id}.json") or other_key == key:
            continue
        raw = ws.store.get(other_key)
        if raw is None:
            continue
        other = json.loads(raw)
        if other.get("embedder") == embedder.name:
            scored.append((cosine(vector, other["vector"]), other["slug"]))
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [slug for score, slug in scored[:limit] if score > 0]


__all__ = ["DIMENSIONS", "Embedder", "HashingEmbedder", "cosine", "index_related"]
