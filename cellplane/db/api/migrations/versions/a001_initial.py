"""The API database as the foundation creates it.

Revision ID: a001
Revises:
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = 'a001'
down_revision = None
branch_labels = None
depends_on = None


def _timestamps():
    return [
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()),
    ]


def upgrade() -> None:
    op.create_table(
        'cell_mappings',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('transport_url', sa.Text, nullable=False),
        sa.Column('database_connection', sa.Text, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
        *_timestamps())
    op.create_table(
        'host_mappings',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False, unique=True),
        sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'), nullable=False),
        *_timestamps())
    op.create_table(
        'instance_mappings',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('queued_for_delete', sa.Boolean, nullable=False, server_default=sa.false()),
        *_timestamps())
    op.create_index('instance_mappings_project_id_idx', 'instance_mappings', ['project_id'])
    op.create_index('instance_mappings_cell_id_idx', 'instance_mappings', ['cell_id'])
    op.create_table(
        'build_requests',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('instance', sa.JSON, nullable=False),
        *_timestamps())
    op.create_table(
        'request_specs',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('spec', sa.JSON, nullable=False),
        *_timestamps())
    op.create_table(
        'flavors',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('flavorid', sa.String(255), nullable=False, unique=True),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('root_gb', sa.Integer, nullable=False, server_default='0'),
        sa.Column('extra_specs', sa.JSON, nullable=False),
        sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
        *_timestamps())
    op.create_table(
        'services',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(255), nullable=False),
        sa.Column('topic', sa.String(255), nullable=True),
        sa.Column('report_count', sa.Integer, nullable=False, server_default='0'),
        sa.Column('last_seen_at', sa.DateTime, nullable=True),
        sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column('disabled_reason', sa.String(255), nullable=True),
        sa.Column('version', sa.String(32), nullable=True),
        sa.UniqueConstraint('host', 'binary', name='uniq_services0host0binary'),
        *_timestamps())
