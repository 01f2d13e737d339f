"""instances.image_ref: the image a server was asked to boot from (the compute API's imageRef).

Stored and shown as asked; cellplane consults no image service.

Revision ID: c004
Revises: c003
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'c004'
down_revision = 'c003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('instances') as batch:
        batch.add_column(sa.Column('image_ref', sa.String(255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('instances') as batch:
        batch.drop_column('image_ref')
