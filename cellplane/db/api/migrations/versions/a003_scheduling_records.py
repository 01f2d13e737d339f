"""Scheduling records in the API database (``[scheduler] record_backend = database``).

One row per ``select_destinations`` run with the record's JSON, and one row
per instance it placed (or failed to), so the record of an instance is
found by index. ``cellplane-manage scheduler purge-records`` keeps the
newest ``[scheduler] records_retention``.

Revision ID: a003
Revises: a002
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = 'a003'
down_revision = 'a002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'scheduling_records',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('request_id', sa.String(255), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('outcome', sa.String(64), nullable=False),
        sa.Column('record', sa.JSON, nullable=False),
        sa.Column('created_at', sa.DateTime, nullable=False),
    )
    op.create_index('scheduling_records_request_id_idx', 'scheduling_records',
                    ['request_id'])
    op.create_table(
        'scheduling_record_instances',
        sa.Column('record_id', sa.Integer,
                  sa.ForeignKey('scheduling_records.id', ondelete='CASCADE'),
                  primary_key=True),
        sa.Column('instance_uuid', sa.String(36), primary_key=True),
    )
    op.create_index('scheduling_record_instances_instance_uuid_idx',
                    'scheduling_record_instances', ['instance_uuid'])
