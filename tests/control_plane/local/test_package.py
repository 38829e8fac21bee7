"""``control_plane.local`` exports what it promises and never imports Prefect (the server is a child)."""

from __future__ import annotations

import subprocess
import sys

from control_plane import local


def test_every_exported_name_exists() -> None:
    assert sorted(local.__all__) == sorted(set(local.__all__))
    for name in local.__all__:
        assert getattr(local, name) is not None, name


def test_importing_the_stack_does_not_import_prefect() -> None:
    code = (
        "import sys, control_plane.local, control_plane.local.stack; "
        "print(sorted(m for m in sys.modules if m == 'prefect' or m.startswith('prefect.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
