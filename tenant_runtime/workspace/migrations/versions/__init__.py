"""The workspace revisions, one file each, applied in order by ``tenant_runtime.workspace.migrations``.

Alembic loads these files by path; the package marker only makes setuptools ship them.
"""
