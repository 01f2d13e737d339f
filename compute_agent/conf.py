"""Options of the compute agent: its virt driver, its availability zone, how often it reports.

The agent also reads the shared options (``[DEFAULT] host``,
``transport_url``, ``[service] report_interval`` for heartbeats, ``[cell]
name``) and ``[placement]`` (``placement/client_conf.py``: where Placement
is and the token to reach it). An agent never has a database option.
"""
from __future__ import annotations

from oslo_config import cfg

from placement import client_conf

compute_group = cfg.OptGroup('compute', title='Compute agent')

compute_opts: list[cfg.Opt] = [
    cfg.StrOpt('virt_driver', default='fake',
               help='The virt driver building instances on this host, by entry '
                    'point name (namespace cellplane.compute.virt_drivers).'),
    cfg.StrOpt('availability_zone',
               help='Availability zone of this host, reported with its compute '
                    'node record (the scheduler\'s AvailabilityZoneFilter reads it).'),
    cfg.IntOpt('hosted_hosts', default=1, min=1, max=5000,
               help='How many hosts this agent serves. 1 (the default): the host '
                    'named [DEFAULT] host, as a real compute node. N > 1: a hollow '
                    'agent serving N fake hosts named <host>-1 ... <host>-N, each '
                    'with its own RPC server name, resource provider, compute node '
                    'and service rows, over one broker connection (for tests and '
                    'benchmarks at scale; only with virt_driver = fake). Lowering N '
                    'removes, at the next start, the hosts above N that hold no '
                    'allocations (their providers, compute nodes and services). The '
                    'hosts share rpc_handler_threads.'),
    cfg.ListOpt('stopped_hosts', default=[], mutable=True,
                help='Hosted hosts of this agent to keep stopped (fault tests): '
                     'a stopped host sends no heartbeat and no report, and the '
                     'messages that reach it wait until it starts. Read at start '
                     'and again on SIGHUP, so one host of a hollow agent can be '
                     'stopped and started alone. A name the agent does not serve '
                     'is reported and ignored.'),
    cfg.IntOpt('placement_refresh_interval', default=300, min=0,
               help='Seconds between two reads of a host\'s provider, inventory and '
                    'traits in Placement once they are in sync (0: every report). '
                    'A change in the driver\'s view is written at the next report '
                    'whatever this is; the reads catch changes made in Placement by '
                    'someone else.'),
    cfg.IntOpt('report_interval', default=60, min=1,
               help='Seconds between two resource reports: the resource provider, '
                    'its inventory and traits in Placement (written only when '
                    'they changed) and the compute node record sent to the cell '
                    'conductor. The first report is made at start.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # Fresh OptGroup per ConfigOpts, so overrides never leak between configs.
    conf.register_group(cfg.OptGroup(compute_group.name, title=compute_group.title))
    conf.register_opts(compute_opts, group=compute_group.name)
    client_conf.register_opts(conf)


def list_opts():
    return [(compute_group, compute_opts), *client_conf.list_opts()]
