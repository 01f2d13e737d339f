"""build_requests.deleted_at: a build request deleted by its user while a super conductor held it.

The super conductor holding it may already have claimed in Placement or
written the instance into a cell. The row stays, hidden from every
listing, until that holder (or whoever resumes its work once it is taken
for dead) has removed what it made and then the row
(``cellplane/objects/build_requests.py``).

Revision ID: a006
Revises: a005
Create Date: 2026-11-25
"""
import sqlalchemy as sa
from alembic import op

revision = 'a006'
down_revision = 'a005'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.add_column(sa.Column('deleted_at', sa.DateTime, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('build_requests') as batch:
        batch.drop_column('deleted_at')
