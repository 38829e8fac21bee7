"""A readable, word-level diff of two document versions (difflib).

Lines are matched first and only changed runs of lines are compared word by
word, so a megabyte body with a few edits costs a line match, not a quadratic
word match over the whole text.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")


def _words(text: str) -> list[str]:
    return _TOKENS.findall(text)


def _opcodes(a: list[str], b: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def _hunks(old: str, new: str) -> list[dict[str, str]]:
    lines_a, lines_b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    hunks: list[dict[str, str]] = []
    for op, i1, i2, j1, j2 in _opcodes(lines_a, lines_b):
        if op == "equal":
            hunks.append({"op": "equal", "old": "".join(lines_a[i1:i2]), "new": "".join(lines_b[j1:j2])})
            continue
        a, b = _words("".join(lines_a[i1:i2])), _words("".join(lines_b[j1:j2]))
        for wop, k1, k2, l1, l2 in _opcodes(a, b):
            hunks.append({"op": wop, "old": "".join(a[k1:k2]), "new": "".join(b[l1:l2])})
    merged: list[dict[str, str]] = []
    for hunk in hunks:  # neighbouring hunks of one kind read as one
        if merged and merged[-1]["op"] == hunk["op"]:
            merged[-1] = {
                "op": hunk["op"],
                "old": merged[-1]["old"] + hunk["old"],
                "new": merged[-1]["new"] + hunk["new"],
            }
        else:
            merged.append(hunk)
    return merged


def _count(text: str) -> int:
    return sum(1 for token in _words(text) if token[0].isalnum() or token[0] == "_")


def word_diff(old: str, new: str) -> dict[str, Any]:
    """Hunks (``equal``/``insert``/``delete``/``replace`` with old and new text), word counts, and one
    string in the ``git diff --word-diff`` style: ``[-removed-]{+added+}``."""
    hunks = _hunks(old, new)
    parts: list[str] = []
    for hunk in hunks:
        if hunk["op"] == "equal":
            parts.append(hunk["old"])
            continue
        if hunk["old"]:
            parts.append(f"[-{hunk['old']}-]")
        if hunk["new"]:
            parts.append(f"{{+{hunk['new']}+}}")
    return {
        "changed": any(h["op"] != "equal" for h in hunks),
        "words_inserted": sum(_count(h["new"]) for h in hunks if h["op"] != "equal"),
        "words_deleted": sum(_count(h["old"]) for h in hunks if h["op"] != "equal"),
        "hunks": hunks,
        "text": "".join(parts),
    }


__all__ = ["word_diff"]
