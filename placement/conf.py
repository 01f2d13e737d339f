"""Options of the Placement service (``cellplane-placement``).

Names follow the reference OpenStack Placement where it has one, so an
operator's existing placement.conf mostly carries over.
"""
from __future__ import annotations

from oslo_config import cfg

from cellplane import conf as shared_conf

placement_database_group = cfg.OptGroup(
    'placement_database', title='Placement database')
placement_database_opts = [
    cfg.StrOpt('connection', secret=True,
               help='SQLAlchemy URL of the Placement database.'),
    cfg.IntOpt('pool_size', default=10, min=1,
               help='Connections kept in the pool (PostgreSQL only).'),
    cfg.IntOpt('max_overflow', default=20, min=0,
               help='Connections allowed beyond pool_size under load.'),
    cfg.BoolOpt('sync_on_startup', default=False,
                help='Run the schema migrations when the service starts.'),
]

api_group = cfg.OptGroup('api', title='Placement HTTP API')
api_opts = [
    cfg.StrOpt('auth_strategy', default='tokens', choices=['noauth2', 'tokens'],
               help='noauth2: development mode, any request carrying the token '
                    '"admin" is an administrator. tokens: static tokens read '
                    'from token_file, each with a role (admin, service, reader).'),
    cfg.StrOpt('token_file',
               help='File of static tokens for auth_strategy=tokens, one per '
                    'line as "<token> <role>" (blank lines and # comments '
                    'ignored).'),
    cfg.HostAddressOpt('bind_host', default='127.0.0.1',
                       help='Address the HTTP server listens on.'),
    cfg.PortOpt('bind_port', default=8778, help='Port the HTTP server listens on.'),
    cfg.IntOpt('workers', default=2, min=1,
               help='HTTP worker processes.'),
    cfg.IntOpt('worker_threads', default=4, min=1,
               help='Threads per worker process: requests one worker serves '
                    'at once while others wait on the database.'),
    cfg.IntOpt('graceful_timeout', default=30, min=1,
               help='Seconds a worker gets to finish its requests after '
                    'SIGTERM before it is killed.'),
]


placement_group = cfg.OptGroup('placement', title='Placement behaviour')
placement_opts = [
    cfg.BoolOpt('randomize_allocation_candidates', default=False,
                help='When GET /allocation_candidates has a limit, return the '
                     'candidates found from a random provider on (wrapping '
                     'around) instead of always the same first ones, so that '
                     'schedulers asking for a few candidates at a time spread '
                     'over all hosts. False: a deterministic order. As the '
                     'reference\'s option; cellplane\'s samples set it true.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    # Fresh OptGroups per ConfigOpts, so overrides never leak between configs.
    for group, opts in ((placement_database_group, placement_database_opts),
                        (api_group, api_opts), (placement_group, placement_opts)):
        conf.register_group(cfg.OptGroup(group.name, title=group.title))
        conf.register_opts(opts, group=group.name)
    # Also among the shared options (config.load registers both): the app
    # reads [metrics] whoever built its configuration.
    conf.register_opts(shared_conf.metrics_opts, group='metrics')


def list_opts():
    return [
        (placement_database_group, placement_database_opts),
        (api_group, api_opts),
        (placement_group, placement_opts),
        # Registered with the shared options; listed here for placement.conf.sample.
        ('metrics', shared_conf.metrics_opts),
    ]
