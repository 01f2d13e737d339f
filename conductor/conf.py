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
    cfg.BoolOpt('allow_resize_to_same_host', default=False,
                help='Super conductor: a resize may keep the instance on its host '
                     '(the host then holds both sizes until the resize is confirmed '
                     'or reverted). Off: the source host is excluded from every move, '
                     'as Nova does by default.'),
    cfg.IntOpt('scheduler_retry_timeout', default=180, min=0,
               help='Super conductor: seconds it keeps asking again, with '
                    'backoff (1 s doubling up to 30 s), a scheduler that did '
                    'not answer select_destinations within rpc_response_timeout '
                    '(a scheduler that died or restarted). Before each new '
                    'attempt the claims the lost answer may have made are '
                    'removed. After this the request goes to ERROR saying the '
                    'scheduler did not answer and for how long. 0: never ask '
                    'again.'),
    cfg.FloatOpt('cell_write_retry_timeout', default=10.0, min=0,
                 help='Super conductor: seconds it keeps writing again, with '
                      'backoff (0.1 s doubling up to 2 s), the instances of a boot '
                      'into a cell whose database cannot be reached (restarting, '
                      'refusing connections, a connection dropped): a database '
                      'restart within this fails no boot. After it the claims are '
                      'removed and the scheduler is asked again without that '
                      'cell\'s hosts (a request with a server group fails '
                      'instead), and an instance no other cell takes goes to ERROR '
                      'naming the database. 0: never write again.'),
    cfg.FloatOpt('database_retry_timeout', default=120.0, min=0,
                 help='Super conductor: seconds the lease of a boot\'s build '
                      'requests in the API database is taken again while that '
                      'database cannot be reached (else the boot waits for a '
                      'resumption). Cell conductor: seconds a report from a compute host (a '
                      'build result, a build start, a reschedule) keeps being '
                      'written again, with backoff (0.1 s doubling up to 2 s), '
                      'while the cell database cannot be reached; the report '
                      'holds one of the rpc_handler_threads meanwhile. Past it '
                      'the report is dropped (the outage is logged once, on '
                      'cellplane.outage) and the stalled-build check moves the '
                      'build later. Heartbeats and '
                      'node records are not retried: the next ones replace them.'),
    cfg.IntOpt('resume_interval', default=30, min=0,
               help='Super conductor: seconds between two looks for build requests '
                    'no live super conductor is placing (one is also made at '
                    'start): those leased by a super conductor whose heartbeat is '
                    'older than [service] service_down_time, or by an earlier '
                    'process on this host, and those never leased '
                    'resume_unleased_after seconds after they were asked for (their '
                    'message was lost). Each is taken over, what the lost run '
                    'wrote into a cell and claimed in Placement is removed, and it '
                    'is scheduled again. Queued moves untouched for '
                    'move_resume_after are looked for at the same time. 0 turns '
                    'both looks off.'),
    cfg.IntOpt('resume_unleased_after', default=120, min=1,
               help='Super conductor: seconds a build request may wait for a super '
                    'conductor to pick up its message before it is taken for lost '
                    'and resumed. A message still queued after this is resumed '
                    'early and skipped when it arrives; nothing is built twice.'),
    cfg.IntOpt('move_resume_after', default=180, min=1,
               help='Super conductor: seconds a move may stay queued without a super '
                    'conductor taking it (or changing it) before it is taken for lost '
                    '(the super conductor that was scheduling it died, or its message '
                    'was lost) and resumed: what its lost run may have claimed is moved '
                    'back in Placement and the move is scheduled again. Looked for '
                    'every resume_interval. Keep it above [DEFAULT] '
                    'rpc_response_timeout: a live super conductor holds a queued move '
                    'for one scheduler call.'),
    cfg.IntOpt('move_timeout', default=600, min=0,
               help='Cell conductor: seconds a move (cold or live migration, resize) '
                    'in pre-migrating or migrating may go without progress before the '
                    'stalled-move check asks its hosts about it: if the destination '
                    'runs the instance the move is finished (its report was lost); if '
                    'neither host is working on it any more, at two looks in a row, '
                    'it is rolled back (the '
                    'instance ACTIVE on its source holding its own allocation, the '
                    'destination\'s claim and copy dropped, the migration in error '
                    'saying why); while a host still works on it (a long copy) it is '
                    'left alone. 0 turns the check off.'),
    cfg.IntOpt('stalled_move_check_interval', default=30, min=1,
               help='Cell conductor: seconds between two looks for moves without '
                    'progress for move_timeout (only when move_timeout is set).'),
    cfg.IntOpt('resize_confirm_window', default=0, min=0,
               help='Super conductor: seconds after which a finished cold migration '
                    'or resize nobody confirmed or reverted is confirmed (its source '
                    'allocation freed), looked for every resize_confirm_interval. '
                    '0 (the default): never; it waits for `cellplane server resize '
                    'confirm` or revert.'),
    cfg.IntOpt('resize_confirm_interval', default=60, min=1,
               help='Super conductor: seconds between two looks for moves past '
                    'resize_confirm_window (only when that is set).'),
    cfg.IntOpt('placement_audit_interval', default=0, min=0,
               help='Super conductor: seconds between two runs of the Placement '
                    'audit that removes allocations no live instance explains and '
                    'claims again those ACTIVE instances lack (what '
                    '`cellplane-manage placement audit --fix` does), each fix '
                    'logged and counted. 0 (the default): never; run the command '
                    'instead. A run skips what changed within '
                    'placement_audit_grace, and does nothing while a cell cannot '
                    'be read.'),
    cfg.IntOpt('placement_audit_grace', default=600, min=0,
               help='Super conductor: seconds an instance or build request must '
                    'have been left unchanged before the periodic audit touches '
                    'its allocations.'),
    cfg.IntOpt('stalled_build_check_interval', default=30, min=0,
               help='Cell conductor: seconds between two looks for stalled builds: '
                    'those cast to a compute host whose service has been down for '
                    '[service] service_down_time, those the host never said it '
                    'started within build_start_timeout, and those cast more than '
                    'build_timeout seconds ago. Each is moved to its next alternate '
                    '(or ERROR when none is left), and a result its first host '
                    'sends later is refused and the instance destroyed there. 0 '
                    'turns the check off.'),
    cfg.FloatOpt('mass_silence_threshold', default=0.55, min=0, max=1,
                 help='Cell conductor: when at least this fraction of the cell\'s '
                      'compute hosts (and two or more) are silent for '
                      'service_down_time at once, the stalled-build check takes it '
                      'for a problem of the message bus or of the conductor (a broker '
                      'restart), not of the hosts, and moves no build off a silent '
                      'host while it lasts. 0 turns this off: every silent host\'s '
                      'builds are moved.'),
    cfg.IntOpt('build_start_timeout', default=120, min=0,
               help='Cell conductor: seconds after its cast within which a compute '
                    'host must say it holds a build (its heartbeat lists the builds '
                    'it holds, every [service] report_interval). A build never said '
                    'started by then is taken for a cast lost on its way to the host '
                    '(a broker restart, a queue deleted) and moved to the next '
                    'alternate by the stalled-build check, without waiting for '
                    'build_timeout; a build the host holds, however slow, is left '
                    'to build_timeout. Set it well above report_interval plus the '
                    'longest a build waits in a host\'s queue. Compute agents older '
                    'than cell conductor API 1.3 never say it: set 0 (no bound) '
                    'until every agent of the cell is upgraded.'),
    cfg.IntOpt('build_timeout', default=900, min=0,
               help='Cell conductor: seconds a build may take on one host, from its '
                    'cast to its result, before it is taken for lost (the cast was '
                    'lost, for example in a broker restart, or the build hangs) and '
                    'moved to the next alternate by the stalled-build check. Set it '
                    'above your slowest real build, queueing on the host included. '
                    '0: no bound (only builds on hosts that went down are moved).'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # A fresh OptGroup per ConfigOpts (as cellplane/conf.py): oslo.config keeps
    # a group's option state, overrides included, on the OptGroup object, so
    # the module-level one would leak set_override between configurations
    # (one embedded cloud's [conductor] overrides into every later one).
    conf.register_group(cfg.OptGroup(conductor_group.name, title=conductor_group.title))
    conf.register_opts(conductor_opts, group=conductor_group.name)


def list_opts():
    return [(conductor_group, conductor_opts)]
