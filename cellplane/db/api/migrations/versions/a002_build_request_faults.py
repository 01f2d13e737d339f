"""Build requests that failed before reaching a cell keep the reason.

When the scheduler finds no valid host the instances never get a cell: they
stay build requests, marked failed with the scheduler's explanation, so that
``cellplane server list/show`` shows them in ERROR with the reason.

Revision ID: a002
Revises: a001
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = 'a002'
down_revision = 'a001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.add_column(sa.Column('fault_message', sa.Text, nullable=True))
        batch.add_column(sa.Column('failed_at', sa.DateTime, nullable=True))
