"""Alembic environment: see cellplane.db.alembic_env."""
from cellplane.db import alembic_env

alembic_env.run()
