"""Alembic environment for the control-plane database."""

from __future__ import annotations

from alembic import context

from control_plane.db.engine import make_engine
from control_plane.db.models import ControlPlaneModel

target_metadata = ControlPlaneModel.metadata


def run_migrations() -> None:
    url = context.config.get_main_option("sqlalchemy.url")
    assert url is not None
    if context.is_offline_mode():
        context.configure(url=url, target_metadata=target_metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = make_engine(url)
    with engine.connect() as connection:
        context.configure(connection=connection, target_metadata=target_metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


run_migrations()
