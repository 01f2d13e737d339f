"""migrations: each move of an instance between hosts of the cell, with its state machine.

Revision ID: c007
Revises: c006
Create Date: 2026-11-26
"""
import sqlalchemy as sa
from alembic import op

revision = 'c007'
down_revision = 'c006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'migrations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('migration_type', sa.String(32), nullable=False),
        sa.Column('status', sa.String(32), nullable=False),
        sa.Column('source_host', sa.String(255), nullable=False),
        sa.Column('source_node', sa.String(255), nullable=False),
        sa.Column('dest_host', sa.String(255), nullable=True),
        sa.Column('dest_node', sa.String(255), nullable=True),
        sa.Column('old_flavor', sa.JSON, nullable=False),
        sa.Column('new_flavor', sa.JSON, nullable=False),
        sa.Column('error', sa.Text, nullable=True),
        sa.Column('request_id', sa.String(255), nullable=True),
        sa.Column('finished_at', sa.DateTime, nullable=True),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()))
    op.create_index('migrations_instance_uuid_idx', 'migrations', ['instance_uuid'])
    op.create_index('migrations_status_idx', 'migrations', ['status'])


def downgrade() -> None:
    op.drop_table('migrations')
