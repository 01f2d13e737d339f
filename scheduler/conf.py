"""Options of the scheduler service: which filters and weighers run, and how the cache behaves.

``register_opts`` adds them to a ConfigOpts; ``list_opts`` feeds
``oslo-config-generator`` through the ``cellplane.scheduler`` entry point.
"""
from __future__ import annotations

from oslo_config import cfg

from cellplane.conf import DEFAULT_ZONE_OPT

DEFAULT_FILTERS = [
    'ComputeFilter',
    'ResourceFitFilter',
    'AvailabilityZoneFilter',
    # Only runs for flavors with aggregate_instance_extra_specs:KEY=VALUE.
    'AggregateInstanceExtraSpecsFilter',
    'RequestedDestinationFilter',
    'IgnoreHostsFilter',
    'RetryFilter',
    'ImagePropertiesFilter',
    'ServerGroupAntiAffinityFilter',
    'ServerGroupAffinityFilter',
    'DifferentHostFilter',
    'SameHostFilter',
]
DEFAULT_WEIGHERS = ['RAMWeigher', 'CPUWeigher', 'DiskWeigher', 'BuildFailureWeigher',
                    'ServerGroupSoftAffinityWeigher', 'ServerGroupSoftAntiAffinityWeigher']

filter_scheduler_group = cfg.OptGroup(
    'filter_scheduler', title='Host filtering and weighing')
scheduler_group = cfg.OptGroup('scheduler', title='Scheduler service')

filter_scheduler_opts = [
    cfg.ListOpt('enabled_filters', default=DEFAULT_FILTERS,
                help='Filters run on every candidate host, in this order, by '
                     'entry point name (namespace cellplane.scheduler.filters). '
                     'Cheap, selective filters first make scheduling faster.'),
    cfg.ListOpt('enabled_weighers', default=DEFAULT_WEIGHERS,
                help='Weighers applied to the hosts that passed the filters, by '
                     'entry point name (namespace cellplane.scheduler.weighers).'),
    cfg.FloatOpt('ram_weight_multiplier', default=1.0,
                 help='Multiplier of the free-memory weight: positive spreads '
                      'instances over hosts, negative packs them, 0 ignores memory.'),
    cfg.FloatOpt('cpu_weight_multiplier', default=1.0,
                 help='Multiplier of the free-vCPU weight: positive spreads, '
                      'negative packs, 0 ignores vCPUs.'),
    cfg.FloatOpt('disk_weight_multiplier', default=1.0,
                 help='Multiplier of the free-disk weight: positive spreads, '
                      'negative packs, 0 ignores disk.'),
    cfg.FloatOpt('soft_affinity_weight_multiplier', default=10.0, min=0.0,
                 help='Multiplier of the soft-affinity weight (members of a soft-affinity '
                      'server group in the host\'s domain): above the free-resource '
                      'weighers\' sum so that the group keeps together while it can.'),
    cfg.FloatOpt('soft_anti_affinity_weight_multiplier', default=10.0, min=0.0,
                 help='Multiplier of the soft-anti-affinity weight (minus the members of a '
                      'soft-anti-affinity server group in the host\'s domain): above the '
                      'free-resource weighers\' sum so that the group spreads while it can.'),
    cfg.FloatOpt('build_failure_weight_multiplier', default=1000000.0,
                 help='Multiplier of the recent-build-failures weight. Positive '
                      'avoids hosts whose recent builds failed; the large default '
                      'ranks any failing host below every healthy one. 0 disables.'),
]

scheduler_opts = [
    cfg.IntOpt('max_placement_results', default=1000, min=1,
               help='Most allocation candidates asked of Placement per request '
                    '(the limit parameter). Lower is faster; too low may miss '
                    'hosts the filters would have accepted.'),
    cfg.IntOpt('min_placement_results', default=10, min=1,
               help='Fewest allocation candidates asked of Placement per '
                    'request: a request for N instances with A alternates asks '
                    'for max(this, N x (A + 1)), at most max_placement_results. '
                    'With Placement\'s randomize_allocation_candidates each request '
                    'sees a different random window of the hosts, so the work per '
                    'request does not grow with the number of hosts (as '
                    'kube-scheduler scores a share of the nodes). If the filters '
                    'leave no host in the window, the request is asked again with '
                    'max_placement_results. Set it to max_placement_results to '
                    'always consider every candidate.'),
    cfg.IntOpt('max_claim_attempts', default=20, min=1,
               help='Most claims tried in Placement for one instance before the '
                    'request fails with NoValidHost. Each refused claim moves on '
                    'to the next best host; this bounds the load when Placement '
                    'refuses everything (for instance a consumer that already '
                    'has allocations).'),
    cfg.BoolOpt('batch_claims', default=True,
                help='Claim the instances of a multi-create in one Placement request '
                     '(POST /allocations, all or nothing) once the claim walk has '
                     'chosen their hosts, instead of one request per instance. If '
                     'Placement refuses the batch (another scheduler took some of '
                     'the room first) nothing was claimed, and the request is '
                     'scheduled again claiming one instance at a time; the scheduling '
                     'record and the cellplane_batch_claims metric say how often.'),
    cfg.FloatOpt('database_retry_timeout', default=20.0, min=0,
                 help='Seconds a select_destinations is run again, with backoff '
                      '(0.1 s doubling up to 2 s), while a database it reads (the '
                      'API database, a cell\'s) cannot be reached: a PostgreSQL '
                      'restart within this fails no boot. What a failed run '
                      'claimed is removed before the next. Keep it below the '
                      'super conductor\'s rpc_response_timeout.'),
    cfg.FloatOpt('host_refresh_interval', default=10.0, min=0.5,
                 help='Seconds between two reads of the compute nodes and their '
                      'service liveness from every cell database. A node added '
                      'to a cell is scheduled to after the next read; SIGHUP '
                      're-reads the list of cells and the nodes at once.'),
    cfg.FloatOpt('host_full_refresh_interval', default=300.0, min=0,
                 help='Seconds between two reads of every compute node of every '
                      'cell. The refreshes in between read only what changed: the '
                      'nodes whose row was written since the last read, the '
                      'compute services created since, and the services that are '
                      'down (an operator change to a service or a cell makes the '
                      'next read a full one). 0: every refresh reads every node.'),
    cfg.ListOpt('failure_domain_levels', default=[],
                help='Failure-domain levels operators group hosts by, smallest '
                     'first, e.g. rack,row,room ("host" is always below them). '
                     'The scheduler records them in the API database when it '
                     'starts, and `cellplane failure-domain` accepts only '
                     'these levels. A starting scheduler refuses (exit 2) '
                     'levels that leave out one that domains use or reorder '
                     'levels one domain is made of another by.'),
    cfg.FloatOpt('assumed_claim_seconds', default=300.0, min=1.0,
                 help='Longest time the host cache re-applies one of its own '
                      'claims to data read from Placement. Claims are normally '
                      'forgotten as soon as a newer read includes them; this only '
                      'bounds the wait when a read never finishes.'),
    cfg.StrOpt('record_backend', default='database',
               help='Where the scheduling record of every select_destinations '
                    'run goes (entry point of cellplane.scheduler.records): '
                    '"database" (the API database, found by request id or '
                    'instance by `cellplane scheduler records` from any '
                    'host; the default, since every scheduler already holds '
                    'that database), "jsonlines" (records_file, one JSON object '
                    'per line, for log shippers), or "none".'),
    cfg.IntOpt('record_queue_size', default=1000, min=1,
               help='Records waiting to be written, at most. Records are '
                    'written by a background thread so that the reply never '
                    'waits; when the queue is full a record is dropped, '
                    'counted and logged (WARNING).'),
    cfg.IntOpt('record_weighed_hosts', default=10, min=0,
               help='Weighed hosts kept per instance in a record, best first.'),
    cfg.StrOpt('records_file', default='',
               help='Path of the JSON lines file (record_backend = jsonlines).'),
    cfg.IntOpt('records_file_max_bytes', default=50 * 1024 * 1024, min=1024,
               help='Size at which the records file is rotated to FILE.1.'),
    cfg.IntOpt('records_file_backups', default=5, min=0,
               help='Rotated records files kept (FILE.1 ... FILE.N).'),
    cfg.IntOpt('records_retention', default=100000, min=1,
               help='Newest records kept in the API database (record_backend = '
                    'database); older ones are purged as records are written '
                    'and by `cellplane-manage scheduler purge-records`.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # Fresh OptGroup objects per ConfigOpts: oslo.config keeps a group's
    # option state (overrides included) on the OptGroup object itself, so
    # sharing the module-level ones would leak set_override between configs.
    for group, opts in ((filter_scheduler_group, filter_scheduler_opts),
                        (scheduler_group, scheduler_opts)):
        conf.register_group(cfg.OptGroup(group.name, title=group.title))
        conf.register_opts(opts, group=group.name)
    # The AvailabilityZoneFilter's zone of a host in none (shared with the compute API).
    conf.register_opt(DEFAULT_ZONE_OPT)


def list_opts():
    return [
        (filter_scheduler_group, filter_scheduler_opts),
        (scheduler_group, scheduler_opts),
        ('DEFAULT', [DEFAULT_ZONE_OPT]),
    ]
