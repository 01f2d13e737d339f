"""build_plans.started_at: when the host said it holds the build.

A compute host's heartbeat lists the builds it holds; the cell conductor
marks them started. A build never marked started within ``[conductor]
build_start_timeout`` of its cast was lost on the way (a cast that never
reached the host), and is moved without waiting for ``build_timeout``.

Revision ID: c003
Revises: c002
Create Date: 2026-11-25
"""
import sqlalchemy as sa
from alembic import op

revision = 'c003'
down_revision = 'c002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('build_plans') as batch:
        batch.add_column(sa.Column('started_at', sa.DateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('build_plans') as batch:
        batch.drop_column('started_at')
