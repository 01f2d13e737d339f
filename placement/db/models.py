"""The Placement database schema, as SQLAlchemy Core tables.

Core, not the ORM: Placement's hot paths (claims, allocation candidates) are
a handful of set-based statements, and the ORM's per-row objects would cost
more than the queries. The layout follows the reference implementation's so
that an operator who knows one knows the other.
"""
from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

_now = sa.func.now


def _timestamps():
    return [
        sa.Column('created_at', sa.DateTime, server_default=_now()),
        sa.Column('updated_at', sa.DateTime, server_default=_now(), onupdate=_now()),
    ]


resource_providers = sa.Table(
    'resource_providers', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.Unicode(200), nullable=False, unique=True),
    sa.Column('generation', sa.Integer, nullable=False, server_default='0'),
    sa.Column('root_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), nullable=True, index=True),
    sa.Column('parent_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), nullable=True, index=True),
    *_timestamps(),
)

resource_classes = sa.Table(
    'resource_classes', metadata,
    # Standard classes keep the id of their position in os-resource-classes;
    # custom classes start at CUSTOM_ID_BASE.
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    *_timestamps(),
)
CUSTOM_RESOURCE_CLASS_ID_BASE = 10000

inventories = sa.Table(
    'inventories', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), nullable=False),
    sa.Column('resource_class_id', sa.Integer,
              sa.ForeignKey('resource_classes.id'), nullable=False),
    sa.Column('total', sa.Integer, nullable=False),
    sa.Column('reserved', sa.Integer, nullable=False, server_default='0'),
    sa.Column('min_unit', sa.Integer, nullable=False, server_default='1'),
    sa.Column('max_unit', sa.Integer, nullable=False),
    sa.Column('step_size', sa.Integer, nullable=False, server_default='1'),
    sa.Column('allocation_ratio', sa.Float, nullable=False, server_default='1.0'),
    sa.UniqueConstraint('resource_provider_id', 'resource_class_id',
                        name='uniq_inventories0resource_provider_resource_class'),
    sa.Index('inventories_resource_class_id_idx', 'resource_class_id'),
    *_timestamps(),
)

projects = sa.Table(
    'projects', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True),
    *_timestamps(),
)

users = sa.Table(
    'users', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('external_id', sa.String(255), nullable=False, unique=True),
    *_timestamps(),
)

consumer_types = sa.Table(
    'consumer_types', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    *_timestamps(),
)

consumers = sa.Table(
    'consumers', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    # No foreign keys to projects, users, consumer types (as the reference):
    # those rows are never removed, and checking a key locks the shared row
    # on every claim (migration e3b8d5a2c7f1).
    sa.Column('project_id', sa.Integer, nullable=False),
    sa.Column('user_id', sa.Integer, nullable=False),
    sa.Column('generation', sa.Integer, nullable=False, server_default='0'),
    sa.Column('consumer_type_id', sa.Integer, nullable=True),
    sa.Index('consumers_project_id_user_id_uuid_idx', 'project_id', 'user_id', 'uuid'),
    *_timestamps(),
)

allocations = sa.Table(
    'allocations', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), nullable=False),
    sa.Column('consumer_id', sa.String(36), nullable=False),
    # No foreign key to resource_classes: an allocation needs an inventory
    # of its class, which has one (migration e3b8d5a2c7f1).
    sa.Column('resource_class_id', sa.Integer, nullable=False),
    sa.Column('used', sa.Integer, nullable=False),
    sa.Index('allocations_resource_provider_class_used_idx',
             'resource_provider_id', 'resource_class_id', 'used'),
    sa.Index('allocations_consumer_id_idx', 'consumer_id'),
    sa.Index('allocations_resource_class_id_idx', 'resource_class_id'),
    *_timestamps(),
)

traits = sa.Table(
    'traits', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('name', sa.Unicode(255), nullable=False, unique=True),
    *_timestamps(),
)

resource_provider_traits = sa.Table(
    'resource_provider_traits', metadata,
    sa.Column('trait_id', sa.Integer, sa.ForeignKey('traits.id'), primary_key=True),
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), primary_key=True),
    sa.Index('resource_provider_traits_rp_idx', 'resource_provider_id'),
    *_timestamps(),
)

placement_aggregates = sa.Table(
    'placement_aggregates', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    *_timestamps(),
)

resource_provider_aggregates = sa.Table(
    'resource_provider_aggregates', metadata,
    sa.Column('resource_provider_id', sa.Integer,
              sa.ForeignKey('resource_providers.id'), primary_key=True),
    sa.Column('aggregate_id', sa.Integer,
              sa.ForeignKey('placement_aggregates.id'), primary_key=True),
    sa.Index('resource_provider_aggregates_aggregate_id_idx', 'aggregate_id'),
    *_timestamps(),
)
