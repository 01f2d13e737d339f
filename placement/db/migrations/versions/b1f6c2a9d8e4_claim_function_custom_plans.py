"""PostgreSQL: placement_replace_allocations() plans its statements on every call.

PL/pgSQL caches each statement's plan per connection, and after five calls
may keep a generic plan made for no particular argument values, from the
table sizes of that moment. The daemon's pooled connections live for
hours: plans made while the tables were small (a new deployment) scan
them ("id = ANY(...)" on resource_providers, "consumer_id = ANY(...)" on
allocations), and keep scanning as the tables grow, dead rows included.
Measured on one daemon after a benchmark had grown and emptied its
providers: 6.7 ms of PostgreSQL CPU per claim, 1.3 ms after a restart
(fresh connections), 10.7 -> 3.8 ms per claim over HTTP.

``plan_cache_mode = force_custom_plan``, set on the function only, makes
every call plan its statements for the arguments and tables of that call:
about 0.4 ms more PostgreSQL CPU per claim than a good cached plan, but the
cost no longer depends on when the connection was opened or how large the
tables were then. (The setting exists from PostgreSQL 12.)

Revision ID: b1f6c2a9d8e4
Revises: 7c2d9e41a0b3
Create Date: 2026-11-22
"""
from alembic import op

revision = 'b1f6c2a9d8e4'
down_revision = '7c2d9e41a0b3'
branch_labels = None
depends_on = None


def _supported() -> bool:
    bind = op.get_bind()
    return (bind.dialect.name == 'postgresql'
            and bind.dialect.server_version_info >= (12,))


def upgrade() -> None:
    if _supported():
        op.execute('ALTER FUNCTION placement_replace_allocations(jsonb) '
                   'SET plan_cache_mode = force_custom_plan')


def downgrade() -> None:
    if _supported():
        op.execute('ALTER FUNCTION placement_replace_allocations(jsonb) '
                   'RESET plan_cache_mode')
