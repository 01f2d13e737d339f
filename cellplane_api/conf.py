"""Options of the API role (the ``cellplane`` command line): how long cells may take, and the zones
a host in no zone and a service other than a compute are shown in (Nova's names and defaults).

``register_opts`` adds them to a ConfigOpts; ``list_opts`` feeds
``oslo-config-generator`` (entry point ``cellplane.api``).
"""
from __future__ import annotations

from oslo_config import cfg

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
    cfg.StrOpt('default_availability_zone', default='nova',
               help='The availability zone the compute API shows for a compute host '
                    'that no aggregate puts in a zone and whose agent reports none '
                    '([compute] availability_zone): os-services, os-availability-zone.'),
    cfg.StrOpt('internal_service_availability_zone', default='internal',
               help='The availability zone the compute API shows for the services that '
                    'are not compute hosts (conductors, schedulers); os-availability-zone '
                    'lists it only in its detail.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(cfg.OptGroup(cells_group.name, title=cells_group.title))
    conf.register_opts(cells_opts, group=cells_group.name)
    conf.register_opts(zone_opts)


def list_opts():
    return [(cells_group, cells_opts), ('DEFAULT', zone_opts)]
