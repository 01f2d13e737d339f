"""A cell database as the foundation creates it.

Revision ID: c001
Revises:
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = 'c001'
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
    op.create_table(
        'compute_nodes',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('nodename', sa.String(255), nullable=False),
        sa.Column('vcpus', sa.Integer, nullable=False),
        sa.Column('memory_mb', sa.Integer, nullable=False),
        sa.Column('local_gb', sa.Integer, nullable=False),
        sa.Column('cpu_allocation_ratio', sa.Float, nullable=False, server_default='1.0'),
        sa.Column('ram_allocation_ratio', sa.Float, nullable=False, server_default='1.0'),
        sa.Column('disk_allocation_ratio', sa.Float, nullable=False, server_default='1.0'),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('stats', sa.JSON, nullable=False),
        sa.UniqueConstraint('host', 'nodename', name='uniq_compute_nodes0host0nodename'),
        *_timestamps())
    op.create_table(
        'instances',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('display_name', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('node', sa.String(255), nullable=True),
        sa.Column('flavor', sa.JSON, nullable=False),
        sa.Column('vm_state', sa.String(32), nullable=False),
        sa.Column('task_state', sa.String(32), nullable=True),
        sa.Column('availability_zone', sa.String(255), nullable=True),
        sa.Column('launched_at', sa.DateTime, nullable=True),
        sa.Column('deleted_at', sa.DateTime, nullable=True),
        *_timestamps())
    op.create_index('instances_host_idx', 'instances', ['host'])
    op.create_index('instances_project_id_idx', 'instances', ['project_id'])
    op.create_table(
        'instance_actions',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('action', sa.String(255), nullable=False),
        sa.Column('request_id', sa.String(255), nullable=True),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('start_time', sa.DateTime, nullable=True),
        sa.Column('finish_time', sa.DateTime, nullable=True),
        sa.Column('message', sa.Text, nullable=True),
        *_timestamps())
    op.create_index('instance_actions_instance_uuid_idx', 'instance_actions', ['instance_uuid'])
    op.create_table(
        'instance_action_events',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('action_id', sa.Integer, sa.ForeignKey('instance_actions.id'), nullable=False),
        sa.Column('event', sa.String(255), nullable=False),
        sa.Column('host', sa.String(255), nullable=True),
        sa.Column('node', sa.String(255), nullable=True),
        sa.Column('start_time', sa.DateTime, nullable=True),
        sa.Column('finish_time', sa.DateTime, nullable=True),
        sa.Column('result', sa.String(32), nullable=True),
        sa.Column('reason', sa.Text, nullable=True),
        *_timestamps())
    op.create_index('instance_action_events_action_id_idx', 'instance_action_events', ['action_id'])
    op.create_table(
        'instance_faults',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('instance_uuid', sa.String(36), nullable=False),
        sa.Column('code', sa.Integer, nullable=False),
        sa.Column('message', sa.String(255), nullable=False),
        sa.Column('details', sa.Text, nullable=True),
        sa.Column('host', sa.String(255), nullable=True),
        *_timestamps())
    op.create_index('instance_faults_instance_uuid_idx', 'instance_faults', ['instance_uuid'])
