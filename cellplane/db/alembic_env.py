"""The body of every history's Alembic ``env.py``: migrate on the engine given.

``cellplane.db.migrate`` puts the engine and the version table name in the
Alembic config's attributes; each ``migrations/env.py`` just calls ``run``.
"""
from __future__ import annotations

from alembic import context


def run() -> None:
    config = context.config
    engine = config.attributes['engine']
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            version_table=config.attributes['version_table'],
            render_as_batch=connection.dialect.name == 'sqlite',
            transaction_per_migration=True,
        )
        with context.begin_transaction():
            context.run_migrations()
        connection.commit()
