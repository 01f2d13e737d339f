"""Change stamps: what tells a scheduler its cached hosts, zones and cells are older than the API DB.

``change_stamps`` holds one row per kind of change (``scheduling``), seeded
at 0; every change to aggregates, zones, failure domains, cell mappings or
a compute service's disabled flag raises it (``cellplane/objects/change_stamps.py``).

Revision ID: a009
Revises: a008
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a009'
down_revision = 'a008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        'change_stamps',
        sa.Column('name', sa.String(64), primary_key=True),
        sa.Column('stamp', sa.BigInteger, nullable=False, server_default='0'),
        sa.Column('changed_at', sa.DateTime, server_default=sa.func.now()),
    )
    # Seeded, so that raising a stamp is always one UPDATE (no insert race).
    op.bulk_insert(table, [{'name': 'scheduling', 'stamp': 0}])


def downgrade() -> None:
    op.drop_table('change_stamps')
