"""flavors.description: free text about a flavor for its users (the compute API's 2.55).

Revision ID: a011
Revises: a010
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a011'
down_revision = 'a010'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('flavors') as batch:
        batch.add_column(sa.Column('description', sa.Text, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('flavors') as batch:
        batch.drop_column('description')
