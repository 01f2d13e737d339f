"""build_plans: the build in flight of each instance, so that a dead host's builds are moved.

Revision ID: c002
Revises: c001
Create Date: 2026-11-25
"""
import sqlalchemy as sa
from alembic import op

revision = 'c002'
down_revision = 'c001'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'build_plans',
        sa.Column('instance_uuid', sa.String(36), primary_key=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('instance', sa.JSON, nullable=False),
        sa.Column('request_spec', sa.JSON, nullable=False),
        sa.Column('host_list', sa.JSON, nullable=False),
        sa.Column('cast_at', sa.DateTime, nullable=False),
        sa.Column('ended_at', sa.DateTime, nullable=True),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()))
    op.create_index('build_plans_host_idx', 'build_plans', ['host'])
    op.create_index('build_plans_ended_at_idx', 'build_plans', ['ended_at'])
