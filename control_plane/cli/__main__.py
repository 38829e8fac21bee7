"""``python -m control_plane.cli``: how the stack starts its children."""

from control_plane.cli import main

main()
