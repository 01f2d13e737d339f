"""Options of the compute API daemon (``cellplane-api``), beside the API role's ``[cells]``.

Names follow Nova and Placement where they have one (``[api]
auth_strategy``, ``[oslo_middleware] max_request_body_size``).
``register_opts`` adds them to a ConfigOpts; ``list_opts`` feeds
``oslo-config-generator`` (entry point ``cellplane.compute_api``).
"""
from __future__ import annotations

import os

from keystonemiddleware import auth_token
from oslo_config import cfg
from oslo_middleware import cors, http_proxy_to_wsgi
from oslo_middleware.healthcheck import opts as healthcheck_opts
from oslo_policy import opts as policy_opts

from cellplane import conf as shared_conf
from cellplane import config
from cellplane.rpc import options as rpc_options
from cellplane.wsgi import tls
from cellplane_api import conf as api_role_conf
from cellplane_api import image_catalog
from placement import client_conf

api_group = cfg.OptGroup('api', title='Compute HTTP API')
api_opts = [
    cfg.StrOpt('auth_strategy', default='keystone', choices=[
        ('keystone', 'keystonemiddleware validates the token; production'),
        ('noauth2', 'nothing is checked; tests and the demo only')],
        help='keystone: keystonemiddleware\'s auth_token validates each request\'s '
             'X-Auth-Token with Keystone, configured by [keystone_authtoken]. '
             'noauth2: for tests and the demo only, no credential is checked: the '
             'token "user[:project]" names the caller; its roles are the X-Roles '
             'header, else admin,member,reader for the user "admin" and '
             'member,reader for any other. Version discovery and /healthcheck '
             'never need a token.'),
    cfg.HostAddressOpt('bind_host', default='127.0.0.1',
                       help='Address the HTTP server listens on.'),
    cfg.PortOpt('bind_port', default=8774, help='Port the HTTP server listens on.'),
    cfg.IntOpt('workers', default=2, min=1, help='HTTP worker processes.'),
    cfg.IntOpt('worker_threads', default=4, min=1,
               help='Threads per worker process: requests one worker serves at once.'),
    cfg.IntOpt('graceful_timeout', default=30, min=1,
               help='Seconds a worker gets to finish its requests after SIGTERM '
                    'before it is killed.'),
    cfg.IntOpt('max_request_body_size', default=114688, min=1,
               help='Largest request body accepted, in bytes (Nova\'s default); '
                    'larger is 413.'),
    *tls.tls_opts,
]

image_catalog_group = cfg.OptGroup('image_catalog', title='Images users may boot (read-only)')
image_catalog_opts = [
    cfg.StrOpt('images_file', default='',
               help='A YAML file listing the images users may boot '
                    '(cellplane_api/image_catalog.py gives its form: id, name, '
                    'disk_format, min_disk, min_ram, properties). cellplane runs no image '
                    'service: the API serves this file read-only at /image as Glance v2 '
                    'does, for the clients that look an image name up in the Keystone '
                    'catalog\'s image service (openstack server create --image NAME). '
                    'When set, POST /servers refuses an imageRef the file does not list '
                    '(400) and gives the scheduler the image\'s properties. Empty: no '
                    'catalog; /image/v2/images lists nothing and any imageRef is stored '
                    'as given. Read again when the file changes. A relative name is '
                    'looked for beside the config files first.'),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_group(cfg.OptGroup(api_group.name, title=api_group.title))
    conf.register_opts(api_opts, group=api_group.name)
    conf.register_group(cfg.OptGroup(image_catalog_group.name, title=image_catalog_group.title))
    conf.register_opts(image_catalog_opts, group=image_catalog_group.name)
    api_role_conf.register_opts(conf)
    # [placement]: hypervisor usage, and quotas count the project's cores and RAM there.
    client_conf.register_opts(conf)
    rpc_options.register_opts(conf)
    conf.register_opts(shared_conf.metrics_opts, group='metrics')
    policy_opts.set_defaults(conf)
    conf.register_opts(cors.CORS_OPTS, group='cors')
    conf.register_opts(healthcheck_opts.HEALTHCHECK_OPTS, group='healthcheck')
    conf.register_opts(http_proxy_to_wsgi.OPTS, group='oslo_middleware')
    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)


def check(conf: cfg.ConfigOpts) -> None:
    """What oslo.config cannot check alone; a ``config.ConfigError`` naming the option."""
    if not conf.api_database.connection:
        raise config.ConfigError('[api_database] connection is not set: the compute API '
                                 'reads and writes the API database')
    tls.check(conf)
    if conf.api.auth_strategy == 'keystone':
        for name in ('www_authenticate_uri', 'auth_type'):
            if not conf.keystone_authtoken[name]:
                where = config.name_option(conf, 'auth_strategy', 'api')
                raise config.ConfigError(
                    f'{where} is keystone, which needs [keystone_authtoken] {name}; '
                    f'noauth2 is for tests only')
    if not conf.placement.auth_type and not conf.placement.endpoint_url:
        raise config.ConfigError('[placement] endpoint_url (or auth_type and its Keystone '
                                 'options) is not set: the compute API reads hypervisor usage '
                                 'from Placement and marks disabled hosts there')
    if conf.quota.driver == 'unified_limits':
        from cellplane_api import unified_limits
        unified_limits.check_conf(conf)
    path = images_path(conf)
    if path is not None:
        try:
            image_catalog.ImageCatalog(path)
        except image_catalog.CatalogError as exc:
            raise config.ConfigError(f'[image_catalog] images_file: {exc}') from None


def images_path(conf: cfg.ConfigOpts) -> str | None:
    """``[image_catalog] images_file``: None when unset; a relative name is looked
    for beside the config files (oslo.config's ``find_file``), else is the
    working directory's."""
    name = conf.image_catalog.images_file
    if not name:
        return None
    if os.path.isabs(name):
        return name
    return conf.find_file(name) or name


def defaults() -> cfg.ConfigOpts:
    """The options at their defaults, read from no file (tests)."""
    conf = cfg.ConfigOpts()
    shared_conf.register_opts(conf)
    register_opts(conf)
    conf([], project='cellplane', default_config_files=[], default_config_dirs=[])
    return conf


def list_opts():
    return [(api_group, api_opts), (image_catalog_group, image_catalog_opts)]
