"""Pages of a server-side list: which page, how many, and the links to the others."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urlencode

PAGE_SIZE = 50
T = TypeVar("T")


@dataclass(frozen=True)
class Pages:
    """Page ``number`` (from 1) of ``total`` rows, ``size`` a page; ``keep`` are the filters the links keep."""

    number: int
    size: int
    total: int
    keep: dict[str, str] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return max(1, -(-self.total // self.size))

    @property
    def first_row(self) -> int:
        return 0 if self.total == 0 else (self.number - 1) * self.size + 1

    @property
    def last_row(self) -> int:
        return min(self.total, self.number * self.size)

    def link(self, number: int) -> str:
        """The query string of page ``number`` with the same filters."""
        params = {k: v for k, v in self.keep.items() if v}
        if number > 1:
            params["page"] = str(number)
        return "?" + urlencode(params) if params else "?"

    @property
    def previous(self) -> str | None:
        return self.link(self.number - 1) if self.number > 1 else None

    @property
    def next(self) -> str | None:
        return self.link(self.number + 1) if self.number < self.count else None


def window(
    rows: Sequence[T], number: int, size: int, keep: dict[str, str] | None = None, *, path: str = ""
) -> tuple[list[T], str | None, str | None]:
    """Page ``number`` of a list fetched one row past the page (that row says another page follows), and the
    links to the pages before and after it (``path`` + query, relative when ``path`` is empty), keeping the
    filters in ``keep`` (URL-encoded; empty ones dropped)."""

    def link(to: int) -> str:
        params = {k: v for k, v in (keep or {}).items() if v} | ({"page": str(to)} if to > 1 else {})
        return f"{path}?{urlencode(params)}"

    return list(rows[:size]), link(number - 1) if number > 1 else None, link(number + 1) if len(rows) > size else None


__all__ = ["PAGE_SIZE", "Pages", "window"]
