"""Server groups: a policy among instances at a failure-domain level, and their members.

``server_groups`` names each group per project with its policy, its level
(``host`` or a recorded failure-domain level) and ``max_per_domain``.
``server_group_members`` holds each member instance and the place it holds
(the domain at the group's level and a slot in it): the unique (group,
domain, slot) keeps concurrent schedulers from overfilling a domain
(``cellplane/objects/server_groups.py``).

Revision ID: a008
Revises: a007
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a008'
down_revision = 'a007'
branch_labels = None
depends_on = None


def _timestamps() -> list[sa.Column]:
    return [sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
            sa.Column('updated_at', sa.DateTime, server_default=sa.func.now())]


def upgrade() -> None:
    op.create_table(
        'server_groups',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('policy', sa.String(32), nullable=False),
        sa.Column('level', sa.String(64), nullable=False),
        sa.Column('max_per_domain', sa.Integer, nullable=False, server_default='1'),
        sa.UniqueConstraint('project_id', 'name', name='uniq_server_groups0project_id0name'),
        *_timestamps(),
    )
    op.create_table(
        'server_group_members',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('group_id', sa.Integer, sa.ForeignKey('server_groups.id'),
                  nullable=False),
        sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('domain', sa.String(255), nullable=True),
        sa.Column('slot', sa.Integer, nullable=True),
        sa.UniqueConstraint('group_id', 'domain', 'slot',
                            name='uniq_server_group_members0group_id0domain0slot'),
        *_timestamps(),
    )
    op.create_index('server_group_members_group_id_idx', 'server_group_members',
                    ['group_id'])


def downgrade() -> None:
    op.drop_table('server_group_members')
    op.drop_table('server_groups')
