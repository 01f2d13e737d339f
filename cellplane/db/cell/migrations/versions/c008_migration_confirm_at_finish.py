"""migrations.confirm_at_finish: a cold move whose asker wants it confirmed as soon as it finishes.

A host drain asks its cold moves this way (``cellplane_api/host_drain.py``):
the cell conductor confirms the move itself once the destination runs it,
instead of waiting for a ``confirm_resize`` the drain would send after
seeing it ``finished``. Rows that exist are false: asked before, confirmed
by whoever asked them, as they were.

Revision ID: c008
Revises: c007
Create Date: 2026-11-27
"""
import sqlalchemy as sa
from alembic import op

revision = 'c008'
down_revision = 'c007'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('migrations') as batch:
        batch.add_column(sa.Column('confirm_at_finish', sa.Boolean, nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('migrations') as batch:
        batch.drop_column('confirm_at_finish')
