"""Initial Placement schema: every table of placement.db.models.

Written out table by table (not ``metadata.create_all``) so that a later
change to models.py never rewrites what an existing database was built
with; the next change gets its own revision.

Revision ID: 5a1f0c3e7b21
Revises:
Create Date: 2026-11-22
"""
import sqlalchemy as sa
from alembic import op

revision = '5a1f0c3e7b21'
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
        'resource_providers',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('name', sa.Unicode(200), nullable=False),
        sa.Column('generation', sa.Integer, nullable=False, server_default='0'),
        sa.Column('root_provider_id', sa.Integer, nullable=True),
        sa.Column('parent_provider_id', sa.Integer, nullable=True),
        *_timestamps(),
        sa.ForeignKeyConstraint(['root_provider_id'], ['resource_providers.id']),
        sa.ForeignKeyConstraint(['parent_provider_id'], ['resource_providers.id']),
        sa.UniqueConstraint('uuid'),
        sa.UniqueConstraint('name'),
    )
    op.create_index('ix_resource_providers_root_provider_id',
                    'resource_providers', ['root_provider_id'])
    op.create_index('ix_resource_providers_parent_provider_id',
                    'resource_providers', ['parent_provider_id'])

    op.create_table(
        'resource_classes',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
        sa.Column('name', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('name'),
    )

    op.create_table(
        'inventories',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer, nullable=False),
        sa.Column('resource_class_id', sa.Integer, nullable=False),
        sa.Column('total', sa.Integer, nullable=False),
        sa.Column('reserved', sa.Integer, nullable=False, server_default='0'),
        sa.Column('min_unit', sa.Integer, nullable=False, server_default='1'),
        sa.Column('max_unit', sa.Integer, nullable=False),
        sa.Column('step_size', sa.Integer, nullable=False, server_default='1'),
        sa.Column('allocation_ratio', sa.Float, nullable=False,
                  server_default='1.0'),
        *_timestamps(),
        sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_providers.id']),
        sa.ForeignKeyConstraint(['resource_class_id'], ['resource_classes.id']),
        sa.UniqueConstraint('resource_provider_id', 'resource_class_id',
                            name='uniq_inventories0resource_provider_resource_class'),
    )
    op.create_index('inventories_resource_class_id_idx',
                    'inventories', ['resource_class_id'])

    op.create_table(
        'projects',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('external_id', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('external_id'),
    )

    op.create_table(
        'users',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('external_id', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('external_id'),
    )

    op.create_table(
        'consumer_types',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('name', sa.String(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('name'),
    )

    op.create_table(
        'consumers',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        sa.Column('project_id', sa.Integer, nullable=False),
        sa.Column('user_id', sa.Integer, nullable=False),
        sa.Column('generation', sa.Integer, nullable=False, server_default='0'),
        sa.Column('consumer_type_id', sa.Integer, nullable=True),
        *_timestamps(),
        sa.ForeignKeyConstraint(['project_id'], ['projects.id']),
        sa.ForeignKeyConstraint(['user_id'], ['users.id']),
        sa.ForeignKeyConstraint(['consumer_type_id'], ['consumer_types.id']),
        sa.UniqueConstraint('uuid'),
    )
    op.create_index('consumers_project_id_user_id_uuid_idx',
                    'consumers', ['project_id', 'user_id', 'uuid'])

    op.create_table(
        'allocations',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('resource_provider_id', sa.Integer, nullable=False),
        sa.Column('consumer_id', sa.String(36), nullable=False),
        sa.Column('resource_class_id', sa.Integer, nullable=False),
        sa.Column('used', sa.Integer, nullable=False),
        *_timestamps(),
        sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_providers.id']),
        sa.ForeignKeyConstraint(['resource_class_id'], ['resource_classes.id']),
    )
    op.create_index('allocations_resource_provider_class_used_idx', 'allocations',
                    ['resource_provider_id', 'resource_class_id', 'used'])
    op.create_index('allocations_consumer_id_idx', 'allocations', ['consumer_id'])
    op.create_index('allocations_resource_class_id_idx', 'allocations',
                    ['resource_class_id'])

    op.create_table(
        'traits',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('name', sa.Unicode(255), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('name'),
    )

    op.create_table(
        'resource_provider_traits',
        sa.Column('trait_id', sa.Integer, nullable=False),
        sa.Column('resource_provider_id', sa.Integer, nullable=False),
        *_timestamps(),
        sa.ForeignKeyConstraint(['trait_id'], ['traits.id']),
        sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_providers.id']),
        sa.PrimaryKeyConstraint('trait_id', 'resource_provider_id'),
    )
    op.create_index('resource_provider_traits_rp_idx',
                    'resource_provider_traits', ['resource_provider_id'])

    op.create_table(
        'placement_aggregates',
        sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
        sa.Column('uuid', sa.String(36), nullable=False),
        *_timestamps(),
        sa.UniqueConstraint('uuid'),
    )

    op.create_table(
        'resource_provider_aggregates',
        sa.Column('resource_provider_id', sa.Integer, nullable=False),
        sa.Column('aggregate_id', sa.Integer, nullable=False),
        *_timestamps(),
        sa.ForeignKeyConstraint(['resource_provider_id'], ['resource_providers.id']),
        sa.ForeignKeyConstraint(['aggregate_id'], ['placement_aggregates.id']),
        sa.PrimaryKeyConstraint('resource_provider_id', 'aggregate_id'),
    )
    op.create_index('resource_provider_aggregates_aggregate_id_idx',
                    'resource_provider_aggregates', ['aggregate_id'])


def downgrade() -> None:
    for table in ('resource_provider_aggregates', 'placement_aggregates',
                  'resource_provider_traits', 'traits', 'allocations',
                  'consumers', 'consumer_types', 'users', 'projects',
                  'inventories', 'resource_classes', 'resource_providers'):
        op.drop_table(table)
