"""The API database (top level): where cells are, where instances went, what was asked.

Read and written by the top level only: the API role (``cellplane`` CLI),
the super conductor and the scheduler. Cell services never hold its URL.
"""
from __future__ import annotations

import sqlalchemy as sa

from cellplane.db.columns import services_table, timestamps

metadata = sa.MetaData()


cell_mappings = sa.Table(
    'cell_mappings', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    sa.Column('transport_url', sa.Text, nullable=False),
    sa.Column('database_connection', sa.Text, nullable=False),
    sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
    *timestamps(),
)

host_mappings = sa.Table(
    'host_mappings', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('host', sa.String(255), nullable=False, unique=True),
    sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'), nullable=False),
    *timestamps(),
)

instance_mappings = sa.Table(
    'instance_mappings', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
    # NULL until the super conductor has chosen a cell.
    sa.Column('cell_id', sa.Integer, sa.ForeignKey('cell_mappings.id'), nullable=True),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.Column('user_id', sa.String(255), nullable=True),
    sa.Column('queued_for_delete', sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Index('instance_mappings_project_id_idx', 'project_id'),
    sa.Index('instance_mappings_cell_id_idx', 'cell_id'),
    *timestamps(),
)

build_requests = sa.Table(
    'build_requests', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.Column('user_id', sa.String(255), nullable=True),
    sa.Column('instance', sa.JSON, nullable=False),
    # Set when the request failed before reaching a cell (NoValidHost): the
    # instance is shown in ERROR with this reason.
    sa.Column('fault_message', sa.Text, nullable=True),
    sa.Column('failed_at', sa.DateTime, nullable=True),
    # The super conductor placing it: its host and the token of that
    # process (a restarted super conductor has a new one), and since when.
    sa.Column('lease_host', sa.String(255), nullable=True),
    sa.Column('lease_token', sa.String(36), nullable=True),
    sa.Column('leased_at', sa.DateTime, nullable=True),
    # Deleted by its user while a super conductor held it: hidden, and
    # removed once what that run claimed or wrote is undone.
    sa.Column('deleted_at', sa.DateTime, nullable=True),
    *timestamps(),
)

request_specs = sa.Table(
    'request_specs', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('spec', sa.JSON, nullable=False),
    *timestamps(),
)

flavors = sa.Table(
    'flavors', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('flavorid', sa.String(255), nullable=False, unique=True),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    sa.Column('vcpus', sa.Integer, nullable=False),
    sa.Column('memory_mb', sa.Integer, nullable=False),
    sa.Column('root_gb', sa.Integer, nullable=False, server_default='0'),
    sa.Column('extra_specs', sa.JSON, nullable=False),
    sa.Column('disabled', sa.Boolean, nullable=False, server_default=sa.false()),
    *timestamps(),
    # A private flavor is listed and booted only by the projects of flavor_projects.
    sa.Column('is_public', sa.Boolean, nullable=False, server_default=sa.true()),
    # Free text for users (the compute API's flavor description, 2.55).
    sa.Column('description', sa.Text, nullable=True),
)

flavor_projects = sa.Table(
    'flavor_projects', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('flavor_id', sa.Integer, sa.ForeignKey('flavors.id'), nullable=False),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.UniqueConstraint('flavor_id', 'project_id',
                        name='uniq_flavor_projects0flavor_id0project_id'),
    *timestamps(),
)

# Host aggregates: named groups of hosts with operator metadata. The metadata
# key ``availability_zone`` makes the aggregate a zone (Nova's convention).
aggregates = sa.Table(
    'aggregates', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('name', sa.String(255), nullable=False, unique=True),
    sa.Column('metadata', sa.JSON, nullable=False),
    *timestamps(),
)

aggregate_hosts = sa.Table(
    'aggregate_hosts', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('aggregate_id', sa.Integer, sa.ForeignKey('aggregates.id'), nullable=False),
    sa.Column('host', sa.String(255), nullable=False),
    sa.UniqueConstraint('aggregate_id', 'host', name='uniq_aggregate_hosts0aggregate_id0host'),
    sa.Index('aggregate_hosts_host_idx', 'host'),
    *timestamps(),
)

# One row per kind of change long-running readers cache (``scheduling``: what
# the scheduler's host cache reads), its stamp raised in the same
# transaction as the change; a reader that sees another stamp re-reads.
change_stamps = sa.Table(
    'change_stamps', metadata,
    sa.Column('name', sa.String(64), primary_key=True),
    sa.Column('stamp', sa.BigInteger, nullable=False, server_default='0'),
    sa.Column('changed_at', sa.DateTime, server_default=sa.func.now()),
)

# Failure domains (seed 004): the levels the scheduler was started with,
# smallest first (``host`` is always below them and is not recorded).
failure_domain_levels = sa.Table(
    'failure_domain_levels', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('name', sa.String(64), nullable=False, unique=True),
    sa.Column('position', sa.Integer, nullable=False, unique=True),
    *timestamps(),
)

# A domain is one named member of a level; ``uuid`` is its Placement
# aggregate, whose members are its hosts' resource providers.
failure_domains = sa.Table(
    'failure_domains', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('level', sa.String(64), nullable=False),
    sa.Column('name', sa.String(255), nullable=False),
    sa.UniqueConstraint('level', 'name', name='uniq_failure_domains0level0name'),
    *timestamps(),
)

# A domain made of smaller ones (a row of racks): its hosts include theirs.
failure_domain_contents = sa.Table(
    'failure_domain_contents', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('domain_id', sa.Integer, sa.ForeignKey('failure_domains.id'), nullable=False),
    sa.Column('member_id', sa.Integer, sa.ForeignKey('failure_domains.id'), nullable=False),
    sa.UniqueConstraint('domain_id', 'member_id',
                        name='uniq_failure_domain_contents0domain_id0member_id'),
    sa.Index('failure_domain_contents_member_id_idx', 'member_id'),
    *timestamps(),
)

# Every host of every domain, its own (``direct``) or through a contained
# domain. ``level`` repeats the domain's so that the database itself keeps
# a host in at most one domain per level.
failure_domain_hosts = sa.Table(
    'failure_domain_hosts', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('domain_id', sa.Integer, sa.ForeignKey('failure_domains.id'), nullable=False),
    sa.Column('level', sa.String(64), nullable=False),
    sa.Column('host', sa.String(255), nullable=False),
    sa.Column('direct', sa.Boolean, nullable=False),
    sa.UniqueConstraint('level', 'host', name='uniq_failure_domain_hosts0level0host'),
    sa.Index('failure_domain_hosts_domain_id_idx', 'domain_id'),
    *timestamps(),
)

# Server groups (issue 14): a policy among instances at a failure-domain
# level (``host`` or one of ``failure_domain_levels``); names are unique
# per project. ``max_per_domain`` is how many members one domain may hold
# under anti-affinity (1 unless given).
server_groups = sa.Table(
    'server_groups', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.Column('user_id', sa.String(255), nullable=True),
    sa.Column('name', sa.String(255), nullable=False),
    sa.Column('policy', sa.String(32), nullable=False),
    sa.Column('level', sa.String(64), nullable=False),
    sa.Column('max_per_domain', sa.Integer, nullable=False, server_default='1'),
    sa.UniqueConstraint('project_id', 'name', name='uniq_server_groups0project_id0name'),
    *timestamps(),
)

# A member of a group, written with its build request. ``domain`` (the
# domain uuid at the group's level; the host name at ``host``) and ``slot``
# are the place it holds, set by the scheduler when it claims: the unique
# (group, domain, slot) is what keeps two concurrent schedulers from
# putting more than ``max_per_domain`` members in one domain. A member in
# ERROR or deleted gives its place back (both NULL).
server_group_members = sa.Table(
    'server_group_members', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('group_id', sa.Integer, sa.ForeignKey('server_groups.id'), nullable=False),
    sa.Column('instance_uuid', sa.String(36), nullable=False, unique=True),
    sa.Column('domain', sa.String(255), nullable=True),
    sa.Column('slot', sa.Integer, nullable=True),
    sa.UniqueConstraint('group_id', 'domain', 'slot',
                        name='uniq_server_group_members0group_id0domain0slot'),
    sa.Index('server_group_members_group_id_idx', 'group_id'),
    *timestamps(),
)

# Quotas (issue 24): a project's own limit of a resource where it differs
# from the ``[quota]`` default (-1: unlimited), as Nova's ``quotas`` table.
quotas = sa.Table(
    'quotas', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.Column('resource', sa.String(255), nullable=False),
    sa.Column('hard_limit', sa.Integer, nullable=False),
    sa.UniqueConstraint('project_id', 'resource', name='uniq_quotas0project_id0resource'),
    *timestamps(),
)

# One row per project that created something quota counts: the row a
# create locks (an UPDATE of ``serial``) for the rest of its transaction,
# so the quota checks and writes of one project's creates follow each other.
quota_locks = sa.Table(
    'quota_locks', metadata,
    sa.Column('project_id', sa.String(255), primary_key=True),
    sa.Column('serial', sa.BigInteger, nullable=False, server_default='0'),
)

# One row per select_destinations run when [scheduler] record_backend =
# database; ``record`` is the whole record's JSON (scheduler/records/record.py).
scheduling_records = sa.Table(
    'scheduling_records', metadata,
    sa.Column('id', sa.Integer, primary_key=True, autoincrement=True),
    sa.Column('request_id', sa.String(255), nullable=False),
    sa.Column('project_id', sa.String(255), nullable=False),
    sa.Column('outcome', sa.String(64), nullable=False),
    sa.Column('record', sa.JSON, nullable=False),
    sa.Column('created_at', sa.DateTime, nullable=False),
    sa.Index('scheduling_records_request_id_idx', 'request_id'),
)

# Which instances a record is about: finding the record of one instance.
scheduling_record_instances = sa.Table(
    'scheduling_record_instances', metadata,
    sa.Column('record_id', sa.Integer,
              sa.ForeignKey('scheduling_records.id', ondelete='CASCADE'),
              primary_key=True),
    sa.Column('instance_uuid', sa.String(36), primary_key=True),
    sa.Index('scheduling_record_instances_instance_uuid_idx', 'instance_uuid'),
)

# Top-level services (super conductor, scheduler) keep their liveness here;
# cell services keep theirs in their cell database.
services = services_table(metadata)
