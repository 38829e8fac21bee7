"""Pages of a server-side list: which page, how many, and the links to the others."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlencode

PAGE_SIZE = 50


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


__all__ = ["PAGE_SIZE", "Pages"]
