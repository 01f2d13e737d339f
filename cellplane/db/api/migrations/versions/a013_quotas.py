"""Quotas: ``quotas`` (a project's limits where they differ from ``[quota]``) and ``quota_locks``.

``quota_locks`` holds one row per project; a server create locks its
project's row for its transaction, so that two creates of one project
check the quota one after the other (``cellplane/objects/quota_locks.py``).
Follows a012 (the service uuid and forced-down columns).

Revision ID: a013
Revises: a012
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'a013'
down_revision = 'a012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'quotas',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('resource', sa.String(255), nullable=False),
        sa.Column('hard_limit', sa.Integer, nullable=False),
        sa.UniqueConstraint('project_id', 'resource', name='uniq_quotas0project_id0resource'),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()),
    )
    op.create_table(
        'quota_locks',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('serial', sa.BigInteger, nullable=False, server_default='0'),
    )


def downgrade() -> None:
    op.drop_table('quota_locks')
    op.drop_table('quotas')
