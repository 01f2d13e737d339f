"""Failure domains: the operator's levels, the domains (Placement aggregates), their hosts and contents.

``failure_domain_levels`` is what the scheduler was started with
(``[scheduler] failure_domain_levels``), smallest first.
``failure_domains`` names each domain by level and name; its uuid is its
Placement aggregate. ``failure_domain_contents`` says which domains a
larger one is made of, and ``failure_domain_hosts`` holds every host of
every domain (its own or through a contained one), at most one domain per
level and host (``cellplane/objects/failure_domains.py``).

Revision ID: a007
Revises: a006
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a007'
down_revision = 'a006'
branch_labels = None
depends_on = None


def _timestamps() -> list[sa.Column]:
    return [sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
            sa.Column('updated_at', sa.DateTime, server_default=sa.func.now())]


def upgrade() -> None:
    op.create_table(
        'failure_domain_levels',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('name', sa.String(64), nullable=False, unique=True),
        sa.Column('position', sa.Integer, nullable=False, unique=True),
        *_timestamps(),
    )
    op.create_table(
        'failure_domains',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('level', sa.String(64), nullable=False),
        sa.Column('name', sa.String(255), nullable=False),
        sa.UniqueConstraint('level', 'name', name='uniq_failure_domains0level0name'),
        *_timestamps(),
    )
    op.create_table(
        'failure_domain_contents',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('domain_id', sa.Integer, sa.ForeignKey('failure_domains.id'),
                  nullable=False),
        sa.Column('member_id', sa.Integer, sa.ForeignKey('failure_domains.id'),
                  nullable=False),
        sa.UniqueConstraint('domain_id', 'member_id',
                            name='uniq_failure_domain_contents0domain_id0member_id'),
        *_timestamps(),
    )
    op.create_index('failure_domain_contents_member_id_idx', 'failure_domain_contents',
                    ['member_id'])
    op.create_table(
        'failure_domain_hosts',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('domain_id', sa.Integer, sa.ForeignKey('failure_domains.id'),
                  nullable=False),
        sa.Column('level', sa.String(64), nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('direct', sa.Boolean, nullable=False),
        sa.UniqueConstraint('level', 'host', name='uniq_failure_domain_hosts0level0host'),
        *_timestamps(),
    )
    op.create_index('failure_domain_hosts_domain_id_idx', 'failure_domain_hosts',
                    ['domain_id'])


def downgrade() -> None:
    op.drop_table('failure_domain_hosts')
    op.drop_table('failure_domain_contents')
    op.drop_table('failure_domains')
    op.drop_table('failure_domain_levels')
