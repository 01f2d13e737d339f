"""Options of the API role (the ``cellplane`` command line and ``cellplane-api``): how long cells
may take, quotas (with oslo.limit's ``[oslo_limit]`` for Keystone unified limits), and the zones
a host in no zone and a service other than a compute are shown in (Nova's names and defaults).

``register_opts`` adds them to a ConfigOpts; ``list_opts`` feeds
``oslo-config-generator`` (entry point ``cellplane.api``).
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_limit import opts as limit_opts

from cellplane.conf import DEFAULT_ZONE_OPT

DEFAULT_CELL_TIMEOUT = 5.0

cells_group = cfg.OptGroup('cells', title='Reaching the cells from the API role')

cells_opts = [
    cfg.FloatOpt('read_timeout', default=DEFAULT_CELL_TIMEOUT, min=0.1,
                 help='Seconds `cellplane server list/show` waits for a cell\'s '
                      'database. A cell that has not answered by then (down, '
                      'unreachable, a closed port, an unroutable address) has '
                      'its instances listed from the instance mappings with '
                      'status UNKNOWN and the cell named; the other cells are '
                      'still shown. Cells are read at the same time, so this '
                      'bounds the whole command, not each cell.'),
]

zone_opts = [
    DEFAULT_ZONE_OPT,
    cfg.StrOpt('internal_service_availability_zone', default='internal',
               help='The availability zone the compute API shows for the services that '
                    'are not compute hosts (conductors, schedulers); os-availability-zone '
                    'lists it only in its detail.'),
]

quota_group = cfg.OptGroup('quota', title='Quotas: what a project may create')

# Nova's [quota] options, names and defaults; -1 is unlimited.
quota_opts = [
    cfg.StrOpt('driver', default='database', choices=[
        ('database', 'these defaults, overridden per project in the API database '
                     '(os-quota-sets, `cellplane quota set`)'),
        ('unified_limits', 'Keystone unified limits, read through oslo.limit with '
                           'the [oslo_limit] options: registered limits (servers, '
                           'class:VCPU, class:MEMORY_MB, class:DISK_GB, '
                           'server_groups, server_group_members...) of the compute '
                           'service, and project limits overriding them; the '
                           'defaults below are not used, and os-quota-sets '
                           'changes nothing (as Nova with unified limits)')],
        help='Where the limits come from. Usage is counted from Placement '
             '(the project\'s instances\' VCPU, MEMORY_MB and, with unified '
             'limits, every resource class) and the API database (instances, '
             'build requests not placed yet, server groups and their members).'),
    cfg.StrOpt('unified_limits_resource_strategy', default='require',
               choices=[('require', 'a resource in unified_limits_resource_list '
                                    'with no limit in Keystone allows none of it; '
                                    'one not in the list and with no limit is '
                                    'unlimited'),
                        ('ignore', 'a resource in unified_limits_resource_list '
                                   'with no limit in Keystone is unlimited; one '
                                   'not in the list and with no limit allows none')],
               help='With driver = unified_limits: what a resource a create asks '
                    'for (servers, class:VCPU, class:DISK_GB...) means when '
                    'Keystone has neither a registered limit nor a project '
                    'limit for it (Nova\'s option, name and default).'),
    cfg.ListOpt('unified_limits_resource_list', default=['servers'],
                help='With driver = unified_limits: the resources '
                     'unified_limits_resource_strategy names (Nova\'s default: '
                     'servers must have a limit; the resource classes may be '
                     'left unregistered, unlimited).'),
    cfg.IntOpt('instances', default=10, min=-1,
               help='Servers per project (every server not being deleted, '
                    'ERROR ones too).'),
    cfg.IntOpt('cores', default=20, min=-1, help='VCPUs per project.'),
    cfg.IntOpt('ram', default=51200, min=-1, help='MiB of RAM per project.'),
    cfg.IntOpt('server_groups', default=10, min=-1, help='Server groups per project.'),
    cfg.IntOpt('server_group_members', default=10, min=-1,
               help='Servers per server group.'),
    cfg.IntOpt('metadata_items', default=128, min=-1,
               help='Metadata items per server. Shown (os-quota-sets, limits) '
                    'as Nova shows it; cellplane stores no server metadata, '
                    'so nothing counts against it.'),
    cfg.IntOpt('injected_files', default=5, min=-1,
               help='Shown below microversion 2.57 as Nova shows it; cellplane '
                    'injects no files, so nothing counts against it.'),
    cfg.IntOpt('injected_file_content_bytes', default=10240, min=-1,
               help='Shown below microversion 2.57; nothing counts against it.'),
    cfg.IntOpt('injected_file_path_length', default=255, min=-1,
               help='Shown below microversion 2.57 (as injected_file_path_bytes); '
                    'nothing counts against it.'),
    cfg.IntOpt('key_pairs', default=100, min=-1,
               help='Key pairs per user. Shown as Nova shows it; cellplane has '
                    'no key pairs, so nothing counts against it.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # [oslo_limit]: how unified limits reach Keystone (keystoneauth options
    # and the compute endpoint whose limits apply). oslo.limit reads them from
    # the global ConfigOpts, the one cellplane-api and the CLI load.
    limit_opts.register_opts(conf)
    conf.register_group(cfg.OptGroup(cells_group.name, title=cells_group.title))
    conf.register_opts(cells_opts, group=cells_group.name)
    conf.register_opts(zone_opts)
    conf.register_group(cfg.OptGroup(quota_group.name, title=quota_group.title))
    conf.register_opts(quota_opts, group=quota_group.name)


def list_opts():
    return [(cells_group, cells_opts), ('DEFAULT', zone_opts), (quota_group, quota_opts)]
