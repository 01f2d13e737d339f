"""Options shared by every cellplane service.

Each service package declares its own options in its own ``conf.py``; this
module holds only what all of them read: who this host is, which databases
it may hold, how it reports liveness, and the RPC version caps used during
rolling upgrades. ``list_opts`` feeds ``oslo-config-generator``.
"""
from __future__ import annotations

import socket

from oslo_config import cfg

# Nova's [DEFAULT] default_availability_zone: the zone of a compute host that no
# aggregate puts in one and whose agent names none. Shown by the compute API and
# matched by the scheduler, so both roles register (and list) this one option.
DEFAULT_ZONE_OPT = cfg.StrOpt(
    'default_availability_zone', default='nova',
    help='The availability zone of a compute host that no aggregate puts in a zone and '
         'whose agent reports none ([compute] availability_zone): the compute API shows '
         'it (os-services, os-availability-zone) and accepts it in a boot request, and '
         'the scheduler places a server asking for it on those hosts, as Nova does.')

default_opts = [
    cfg.StrOpt('host', default=socket.gethostname(), sample_default='<hostname>',
               help='Name of this host: the RPC server name of a compute agent '
                    'and the host column of its service record.'),
    cfg.IntOpt('graceful_shutdown_timeout', default=60, min=0,
               help='Seconds a daemon waits, after SIGTERM, for in-flight RPC '
                    'work to finish before it exits. 0 waits forever.'),
    cfg.IntOpt('rpc_handler_threads', default=16, min=1,
               help='Threads handling RPC messages in one daemon. The RPC '
                    'connection pool is sized to match.'),
]

api_database_opts = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the API database (cell mappings, '
                    'instance mappings, build requests, request specs). '
                    'Top level only: a cell service refuses to start with it.'),
    cfg.IntOpt('pool_size', default=2, min=1,
               help='Connections to the API database this process keeps open '
                    'between uses (each worker of cellplane-api holds its own). '
                    'See "Connection budget" in ARCHITECTURE.md.'),
    cfg.IntOpt('max_overflow', default=6, min=0,
               help='Connections to the API database opened beyond pool_size '
                    'for a thread that waited 50 ms for one in vain, and closed '
                    'after 10 s unused.'),
    cfg.FloatOpt('pool_timeout', default=30.0, min=0.1,
                 help='Seconds a thread waits for a free API database '
                      'connection once pool_size + max_overflow are in use, '
                      'before its request fails naming these options.'),
]

cell_databases_opts = [
    cfg.IntOpt('pool_size', default=1, min=1,
               help='Connections to EACH cell database a top-level process (the '
                    'scheduler, the super conductor, each cellplane-api worker) '
                    'keeps open between uses: with C cells it keeps up to C x '
                    'pool_size. An engine is made when a cell is first read. See '
                    '"Connection budget" in ARCHITECTURE.md.'),
    cfg.IntOpt('max_overflow', default=3, min=0,
               help='Connections to one cell database opened beyond pool_size '
                    'for a thread that waited 50 ms for one in vain, and closed '
                    'after 10 s unused.'),
    cfg.FloatOpt('pool_timeout', default=30.0, min=0.1,
                 help='Seconds a thread waits for a free connection to a cell '
                      'database once pool_size + max_overflow are in use, '
                      'before its work fails naming these options.'),
]

database_opts = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of this cell\'s database (instances, '
                    'compute nodes, services, actions). Held by the cell '
                    'conductor; compute agents must not have it.'),
    cfg.IntOpt('pool_size', default=2, min=1,
               help='Connections to this cell\'s database the cell conductor '
                    'keeps open between uses. See "Connection budget" in '
                    'ARCHITECTURE.md.'),
    cfg.IntOpt('max_overflow', default=4, min=0,
               help='Connections opened beyond pool_size for a thread that '
                    'waited 50 ms for one in vain, and closed after 10 s '
                    'unused: pool_size + '
                    'max_overflow is what the cell conductor may hold. Fewer '
                    'than its [DEFAULT] rpc_handler_threads: a transaction '
                    'takes milliseconds, and a server shared by many cells '
                    'has a connection limit.'),
    cfg.FloatOpt('pool_timeout', default=30.0, min=0.1,
                 help='Seconds a thread waits for a free connection once '
                      'pool_size + max_overflow are in use, before its work '
                      'fails naming these options.'),
]

service_opts = [
    cfg.IntOpt('report_interval', default=10, min=1,
               help='Seconds between two heartbeats of a service.'),
    cfg.IntOpt('service_down_time', default=60, min=1,
               help='A service whose last heartbeat is older than this many '
                    'seconds is considered down.'),
]

cell_opts = [
    cfg.StrOpt('name',
               help='Name of the cell this service belongs to (cell '
                    'conductors and compute agents). Shown in logs and service '
                    'records. A compute agent also puts the trait '
                    'CUSTOM_CELL_<NAME> on its resource providers, so that a '
                    'move (which stays in its cell) asks Placement for the '
                    'hosts of its cell only; give every agent of a cell the '
                    'same name.'),
]

upgrade_levels_opts = [
    cfg.StrOpt('scheduler', help='Highest scheduler RPC API version to send.'),
    cfg.StrOpt('cell_conductor',
               deprecated_opts=[cfg.DeprecatedOpt('conductor', group='upgrade_levels')],
               help='Highest cell conductor RPC API version to send (compute '
                    'agents to their cell conductor). The deprecated '
                    '[upgrade_levels] conductor sets this and super_conductor '
                    'both; it will be removed in the next release.'),
    cfg.StrOpt('super_conductor',
               deprecated_opts=[cfg.DeprecatedOpt('conductor', group='upgrade_levels')],
               help='Highest super conductor RPC API version to send (the API '
                    'role to the super conductor). The deprecated '
                    '[upgrade_levels] conductor sets this and cell_conductor '
                    'both; it will be removed in the next release.'),
    cfg.StrOpt('compute', help='Highest compute agent RPC API version to send.'),
]

metrics_opts = [
    cfg.HostAddressOpt('bind_host', default='127.0.0.1',
                       help='Address the Prometheus /metrics endpoint listens on.'),
    cfg.PortOpt('bind_port', default=0,
                help='Port of the Prometheus /metrics endpoint of this daemon; 0 (the '
                     'default): no endpoint. Each daemon on a host needs its own.'),
]

api_database_group = cfg.OptGroup('api_database', title='API database (top level only)')
database_group = cfg.OptGroup('database', title='Cell database')
cell_databases_group = cfg.OptGroup(
    'cell_databases', title='The cell databases, as reached from the top level')
service_group = cfg.OptGroup('service', title='Service liveness')
cell_group = cfg.OptGroup('cell', title='Cell membership')
upgrade_levels_group = cfg.OptGroup(
    'upgrade_levels', title='RPC version caps for rolling upgrades')
metrics_group = cfg.OptGroup('metrics', title='Prometheus metrics')


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(default_opts)
    for group, opts in _GROUPED:
        # A fresh OptGroup per ConfigOpts: oslo.config keeps option state
        # (overrides included) on the group object, so sharing the module-level
        # one would leak set_override from one configuration into another.
        conf.register_group(cfg.OptGroup(group.name, title=group.title))
        conf.register_opts(opts, group=group.name)


_GROUPED = (
    (api_database_group, api_database_opts),
    (database_group, database_opts),
    (cell_databases_group, cell_databases_opts),
    (service_group, service_opts),
    (cell_group, cell_opts),
    (upgrade_levels_group, upgrade_levels_opts),
    (metrics_group, metrics_opts),
)


def list_opts():
    return [('DEFAULT', default_opts), *_GROUPED]
