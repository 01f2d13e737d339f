"""A cell database: the instances of one cell, its compute nodes, services and actions.

Held by the cell conductor (read and written) and read by the top level
(the scheduler reads compute nodes and service liveness; the super conductor
creates instances in the cell it chose). Compute agents never hold its URL:
they change it only through RPC to their cell conductor.
"""
from __future__ import annotations

import sqlalchemy as sa

from cellplane.db.columns import services_table, timestamps

metadata = sa.MetaData()


services = services_table(metadata)

compute_nodes = sa.Table(
    'compute_nodes', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    # Also the UUID of the node's resource provider in Placement.
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
    *timestamps(),
)

instances = sa.Table(
    'instances', metadata,
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
    # The image asked for (the compute API's imageRef); no image service is consulted.
    sa.Column('image_ref', sa.String(255), nullable=True),
    # The compute API's server description, and the instance's place in the
    # request that created it (Nova's launch_index).
    sa.Column('description', sa.String(255), nullable=True),
    sa.Column('launch_index', sa.Integer, nullable=False, server_default='0'),
    sa.Index('instances_host_idx', 'host'),
    sa.Index('instances_project_id_idx', 'project_id'),
    *timestamps(),
)

instance_actions = sa.Table(
    'instance_actions', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False),
    sa.Column('action', sa.String(255), nullable=False),
    sa.Column('request_id', sa.String(255), nullable=True),
    sa.Column('user_id', sa.String(255), nullable=True),
    sa.Column('project_id', sa.String(255), nullable=True),
    sa.Column('start_time', sa.DateTime, nullable=True),
    sa.Column('finish_time', sa.DateTime, nullable=True),
    sa.Column('message', sa.Text, nullable=True),
    sa.Index('instance_actions_instance_uuid_idx', 'instance_uuid'),
    *timestamps(),
)

instance_action_events = sa.Table(
    'instance_action_events', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('action_id', sa.Integer, sa.ForeignKey('instance_actions.id'), nullable=False),
    sa.Column('event', sa.String(255), nullable=False),
    sa.Column('host', sa.String(255), nullable=True),
    sa.Column('node', sa.String(255), nullable=True),
    sa.Column('start_time', sa.DateTime, nullable=True),
    sa.Column('finish_time', sa.DateTime, nullable=True),
    sa.Column('result', sa.String(32), nullable=True),
    sa.Column('reason', sa.Text, nullable=True),
    sa.Index('instance_action_events_action_id_idx', 'action_id'),
    *timestamps(),
)

instance_faults = sa.Table(
    'instance_faults', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False),
    sa.Column('code', sa.Integer, nullable=False),
    sa.Column('message', sa.String(255), nullable=False),
    sa.Column('details', sa.Text, nullable=True),
    sa.Column('host', sa.String(255), nullable=True),
    sa.Index('instance_faults_instance_uuid_idx', 'instance_uuid'),
    *timestamps(),
)

# The build in flight of an instance: where it was cast, and what a
# reschedule needs if that host dies (the instance, its request spec, the
# host list: that host's selection, then the alternates left). Written with
# the instance by the super conductor, moved by the cell conductor's
# reschedules; when the build ends, ``host`` is the host that runs the
# instance (NULL: none, ERROR) until the instance is deleted (fencing).
# ``started_at``: when the host's heartbeat first listed the build (NULL:
# not yet; a build never started was lost on its way to the host).
build_plans = sa.Table(
    'build_plans', metadata,
    sa.Column('instance_uuid', sa.String(36), primary_key=True),
    sa.Column('host', sa.String(255), nullable=True),
    sa.Column('instance', sa.JSON, nullable=False),
    sa.Column('request_spec', sa.JSON, nullable=False),
    sa.Column('host_list', sa.JSON, nullable=False),
    sa.Column('cast_at', sa.DateTime, nullable=False),
    sa.Column('ended_at', sa.DateTime, nullable=True),
    sa.Column('started_at', sa.DateTime, nullable=True),
    sa.Index('build_plans_host_idx', 'host'),
    sa.Index('build_plans_ended_at_idx', 'ended_at'),
    *timestamps(),
)

# A move of an instance between hosts of this cell (cold migration, resize,
# later live migration and evacuation): its own uuid is the Placement
# consumer that holds the source host's allocation while the instance's
# uuid holds the destination's. Written by cellplane/objects/migrations.py
# only, whose state machine checks every change of ``status``.
migrations = sa.Table(
    'migrations', metadata,
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
    # A cold move its cell conductor confirms as soon as it finishes (a host drain's).
    sa.Column('confirm_at_finish', sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index('migrations_instance_uuid_idx', 'instance_uuid'),
    sa.Index('migrations_status_idx', 'status'),
    *timestamps(),
)
