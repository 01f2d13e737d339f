"""Host aggregates: named groups of hosts with operator metadata.

``aggregates.metadata`` holds the aggregate's key/value metadata; the key
``availability_zone`` makes the aggregate an availability zone (Nova's
convention). ``aggregate_hosts`` lists the hosts of each aggregate; the
scheduler reads both to feed AggregateInstanceExtraSpecsFilter and
AvailabilityZoneFilter.

Revision ID: a004
Revises: a003
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = 'a004'
down_revision = 'a003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'aggregates',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False, unique=True),
        sa.Column('name', sa.String(255), nullable=False, unique=True),
        sa.Column('metadata', sa.JSON, nullable=False),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()),
    )
    op.create_table(
        'aggregate_hosts',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('aggregate_id', sa.Integer, sa.ForeignKey('aggregates.id'),
                  nullable=False),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('created_at', sa.DateTime, server_default=sa.func.now()),
        sa.Column('updated_at', sa.DateTime, server_default=sa.func.now()),
        sa.UniqueConstraint('aggregate_id', 'host',
                            name='uniq_aggregate_hosts0aggregate_id0host'),
    )
    op.create_index('aggregate_hosts_host_idx', 'aggregate_hosts', ['host'])
