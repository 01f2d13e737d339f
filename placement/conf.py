"""Options of the Placement service (``cellplane-placement``).

Names follow the reference OpenStack Placement where it has one, so an
operator's existing placement.conf mostly carries over.
"""
from __future__ import annotations

from keystonemiddleware import auth_token
from oslo_config import cfg, types
from oslo_middleware import cors
from oslo_middleware.healthcheck import opts as healthcheck_opts

from cellplane import conf as shared_conf
from cellplane import config
from cellplane.wsgi import tls
from placement import policy

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


class _AuthStrategy(types.String):
    """keystone or noauth2; the static token file strategy is gone, and says so."""

    def __init__(self):
        super().__init__(choices=[
            ('keystone', 'keystonemiddleware validates the token; production'),
            ('noauth2', 'nothing is checked; tests and the demo only')],
            type_name='auth strategy')

    def __call__(self, value):
        if str(value).strip() == 'tokens':
            raise ValueError(
                "'tokens' (the static token file) was removed: use keystone "
                "(configured by [keystone_authtoken]) or, for tests and the "
                "demo only, noauth2")
        return super().__call__(value)


api_opts = [
    cfg.Opt('auth_strategy', type=_AuthStrategy(), default='keystone',
            help='keystone: keystonemiddleware\'s auth_token validates each '
                 'request\'s X-Auth-Token with Keystone, configured by the '
                 '[keystone_authtoken] section, and its user, project, roles '
                 'and scope are what the policy judges. noauth2: for tests and '
                 'the demo only, no credential is checked: the token '
                 '"user[:project]" names the caller, its roles are the '
                 'X-Roles header (or admin for the user "admin"), as in the '
                 'reference. / and /healthcheck never need a token.'),
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
    *tls.tls_opts,
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
    policy.register_opts(conf)
    conf.register_opts(cors.CORS_OPTS, group='cors')
    conf.register_opts(healthcheck_opts.HEALTHCHECK_OPTS, group='healthcheck')
    # [keystone_authtoken]: registered here so a bad value is reported at
    # start-up like any other; auth_token registers its auth plugin's
    # options itself.
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)


def check(conf: cfg.ConfigOpts) -> None:
    """What oslo.config cannot check alone; a ``config.ConfigError`` naming the option and file.

    With ``auth_strategy = keystone``, auth_token needs to know where
    clients get tokens (``www_authenticate_uri``, sent in the 401's
    WWW-Authenticate) and how it logs in itself to validate them
    (``auth_type`` and its credentials); without them every request with
    a token would fail later, one by one.

    The policy file (``[oslo_policy] policy_file``, when there is one) is
    read once here too: one that is not YAML or JSON would otherwise make
    every worker die with a traceback as it builds its app.
    """
    _check_policy_file(conf)
    tls.check(conf)
    if conf.api.auth_strategy != 'keystone':
        return
    section = conf.keystone_authtoken
    for name in ('www_authenticate_uri', 'auth_type'):
        if not section[name]:
            where = config.name_option(conf, 'auth_strategy', 'api')
            raise config.ConfigError(
                f'{where} is keystone, which needs [keystone_authtoken] {name} '
                f'(see the operator guide in README.md); noauth2 is for tests only')


def _check_policy_file(conf: cfg.ConfigOpts) -> None:
    try:
        enforcer = policy.make_oslo_enforcer(conf)
    except ValueError as exc:
        # oslo.policy's parse error: a file that is neither YAML nor JSON.
        where = config.name_option(conf, 'policy_file', 'oslo_policy')
        reason = ' '.join(str(exc).split())
        raise config.ConfigError(
            f'{where}: {conf.oslo_policy.policy_file} (or a file in [oslo_policy] '
            f'policy_dirs) is not valid YAML or JSON: {reason}') from None
    enforcer.clear()


def defaults() -> cfg.ConfigOpts:
    """Placement's options at their defaults, read from no file (tests, embedded mode)."""
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf([], project='cellplane', default_config_files=[], default_config_dirs=[])
    return conf


def list_opts():
    return [
        (placement_database_group, placement_database_opts),
        (api_group, api_opts),
        (placement_group, placement_opts),
        # Registered with the shared options; listed here for placement.conf.sample.
        ('metrics', shared_conf.metrics_opts),
    ]
