"""Versions below the API: the word diff, what a retention policy lets go, and what is pinned."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tenant_runtime.actions.documents import create_document, update_document
from tenant_runtime.actions.releases import ReleaseSpec, create_release
from tenant_runtime.ids import utcnow
from tenant_runtime.versions import Policy, word_diff
from tenant_runtime.versions.pins import pinned_document_versions
from tenant_runtime.versions.retention import beyond_cap
from tenant_runtime.workspace import SYSTEM, Backup, Workspace

NOW = utcnow()


def test_word_diff_marks_words_not_lines() -> None:
    diff = word_diff("one two three\nkeep\n", "one 2 three four\nkeep\n")

    assert diff["text"] == "one [-two-]{+2+} three{+ four+}\nkeep\n"
    assert (diff["words_inserted"], diff["words_deleted"]) == (2, 1)


def test_word_diff_of_a_large_body_with_one_edit_stays_small() -> None:
    old = "".join(f"line {n} of the text\n" for n in range(20_000))
    new = old.replace("line 10000 of", "line ten thousand of")

    diff = word_diff(old, new)

    assert diff["words_deleted"] == 1 and diff["words_inserted"] == 2
    assert len([h for h in diff["hunks"] if h["op"] != "equal"]) == 1


def _ages(*days: int) -> list[tuple[int, object]]:
    return [(n + 1, NOW - timedelta(days=d)) for n, d in enumerate(days)]


@pytest.mark.parametrize(
    ("keep_last", "keep_days", "pinned", "expected"),
    [
        (2, 0, set(), [1, 2, 3]),  # the last two (4, 5) stay
        (2, 15, set(), [1, 2]),  # 3 is 10 days old: younger than 15 days
        (1, 0, {2}, [1, 3, 4]),  # a pin is kept whatever the numbers say
        (10, 0, set(), []),
    ],
)
def test_beyond_cap_keeps_the_last_n_and_the_young_and_the_pinned(
    keep_last: int, keep_days: int, pinned: set[int], expected: list[int]
) -> None:
    versions = _ages(40, 30, 10, 5, 1)  # versions 1..5, oldest first

    assert beyond_cap(versions, Policy(keep_last, keep_days), pinned, NOW) == expected  # type: ignore[arg-type]


def test_pins_hold_current_published_scheduled_and_backup_versions(workspace: Workspace) -> None:
    with workspace.transaction() as tx:
        doc = create_document(tx, SYSTEM, slug="pinned", title="T", body="v1", kind="page")
        for n in range(2, 6):
            update_document(tx, SYSTEM, doc.id, expected_version=n - 1, body=f"v{n}")
        doc.status, doc.published_version = "published", 2
        tx.add(doc)
    with workspace.transaction() as tx:
        # a backup taken now needs version 5 (current then); a release scheduled for version 5 too
        tx.add(Backup(id="bak_1", status="succeeded", snapshot_at=utcnow()))
    with workspace.transaction() as tx:
        update_document(tx, SYSTEM, doc.id, expected_version=5, body="v6")
        create_release(
            tx, "acme", SYSTEM, ReleaseSpec(documents=((doc.id, 6),)), publish_at=utcnow() + timedelta(days=1)
        )
    with workspace.transaction() as tx:
        update_document(tx, SYSTEM, doc.id, expected_version=6, body="v7")

    with workspace.reader() as tx:
        pins = {v for d, v in pinned_document_versions(tx) if d == doc.id}

    assert pins == {2, 5, 6, 7}  # published, the backup's, the scheduled release's, current
