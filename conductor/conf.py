"""Options of the conductor: which role it plays, and how often a build is retried.

One package, two roles: the super conductor (top level: API DB, top-level
bus) and the cell conductor (one cell: its DB and its bus, nothing above).
"""
from __future__ import annotations

from oslo_config import cfg

ROLE_SUPER = 'super'
ROLE_CELL = 'cell'

conductor_group = cfg.OptGroup('conductor', title='Conductor')

conductor_opts = [
    cfg.StrOpt('role', choices=[
        (ROLE_SUPER, 'Top level: schedules and places builds into cells; '
                     'holds the API database and the top-level bus.'),
        (ROLE_CELL, 'One cell: records heartbeats, reschedules to alternates; '
                    'holds only its cell database and the cell bus.'),
    ], default=ROLE_CELL,
        help='Which conductor this daemon is.'),
    cfg.IntOpt('max_attempts', default=3, min=1,
               help='Build attempts per instance, the first host included: '
                    'at most max_attempts - 1 alternates are tried.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(conductor_group)
    conf.register_opts(conductor_opts, group=conductor_group)


def list_opts():
    return [(conductor_group, conductor_opts)]
