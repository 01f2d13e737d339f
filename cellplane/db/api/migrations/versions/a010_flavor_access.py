"""Private flavors: ``flavors.is_public`` and ``flavor_projects``, the projects a private flavor is for.

Every flavor so far is public (the column's default). A private flavor is
listed, shown and booted only by the projects ``flavor_projects`` names
(and by admins), as Nova's ``os-flavor-access`` grants it
(``cellplane/objects/flavors.py``).

Revision ID: a010
Revises: a009
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a010'
down_revision = 'a009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('flavors') as batch:
        batch.add_column(sa.Column('is_public', sa.Boolean, nullable=False,
                                   server_default=sa.true()))
    op.create_table(
        'flavor_projects',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('flavor_id', sa.Integer, sa.ForeignKey('flavors.id'), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.UniqueConstraint('flavor_id', 'project_id',
                            name='uniq_flavor_projects0flavor_id0project_id'),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()),
    )


def downgrade() -> None:
    op.drop_table('flavor_projects')
    with op.batch_alter_table('flavors') as batch:
        batch.drop_column('is_public')
