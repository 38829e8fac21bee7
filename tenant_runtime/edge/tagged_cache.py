"""The public site server's in-process cache, invalidated by surrogate keys."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class CachedResponse:
    body: bytes
    content_type: str
    tags: tuple[str, ...]
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()


class TaggedCache:
    """An LRU of responses; ``purge(tags)`` drops every entry carrying any of them."""

    def __init__(self, max_entries: int = 5000) -> None:
        self._entries: OrderedDict[str, CachedResponse] = OrderedDict()
        self._by_tag: dict[str, set[str]] = {}
        self._max = max_entries
        self._lock = threading.Lock()

    def get(self, key: str) -> CachedResponse | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
            return entry

    def put(self, key: str, response: CachedResponse) -> None:
        with self._lock:
            self._drop(key)
            self._entries[key] = response
            for tag in response.tags:
                self._by_tag.setdefault(tag, set()).add(key)
            while len(self._entries) > self._max:
                self._drop(next(iter(self._entries)))

    def purge(self, tags: list[str]) -> int:
        with self._lock:
            keys = set().union(*(self._by_tag.pop(tag, set()) for tag in tags)) if tags else set()
            for key in keys:
                self._drop(key)
            return len(keys)

    def __len__(self) -> int:
        return len(self._entries)

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        for tag in entry.tags:
            keys = self._by_tag.get(tag)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_tag[tag]
