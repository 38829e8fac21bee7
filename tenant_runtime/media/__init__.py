"""The media library of one tenant: what files are (types.py), reading the library (library.py), which
documents point at a file (references.py), and the sweep of the trash (sweep.py)."""
