"""instances.description and instances.launch_index: a server's description (the compute
API's, from 2.19; below it Nova's description is the name) and its place in its create
request, from 0.

Revision ID: c005
Revises: c004
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'c005'
down_revision = 'c004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('description', sa.String(255), nullable=True))
        batch.add_column(sa.Column('launch_index', sa.Integer, nullable=False,
                                   server_default='0'))


def downgrade() -> None:
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('launch_index')
        batch.drop_column('description')
