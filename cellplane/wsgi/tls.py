"""HTTPS for the HTTP daemons (Placement, the compute API): the ``[api]`` certificate options.

    api_opts = [..., *tls.tls_opts]                 # in the role's [api] options
    tls.check(conf)                                  # at start-up: both files, readable
    granian.Server(..., **tls.server_options(conf.api))

With ``ssl_cert_file`` and ``ssl_key_file`` set, granian serves HTTPS
only (TLS 1.3 at least, its default) on ``[api] bind_host:bind_port``;
unset, plain HTTP, for a daemon behind a TLS-terminating proxy or on a
private network.
"""
from __future__ import annotations

import os
import ssl
from pathlib import Path

from oslo_config import cfg

from cellplane import config

tls_opts = [
    cfg.StrOpt('ssl_cert_file', default='',
               help='PEM file of the certificate this daemon presents, followed by '
                    'any intermediate certificates. With ssl_key_file: the daemon '
                    'serves HTTPS only (TLS 1.3), and its clients need the CA that '
                    'signed it ([placement] cafile for cellplane\'s services, '
                    '--os-cacert or OS_CACERT for the OpenStack clients). Empty: plain '
                    'HTTP (behind a TLS-terminating proxy, or on a private network).'),
    cfg.StrOpt('ssl_key_file', default='',
               help='PEM file of the private key of ssl_cert_file (unencrypted; '
                    'readable by this daemon\'s user alone).'),
]


def enabled(api) -> bool:
    """Whether the ``[api]`` group ``api`` serves HTTPS."""
    return bool(api.ssl_cert_file or api.ssl_key_file)


def check(conf: cfg.ConfigOpts, group: str = 'api') -> None:
    """Both files or neither, each readable and a matching pair; else a ``config.ConfigError``.

    Checked before the workers fork: granian would otherwise fail in each
    worker with a bare ``ssl.SSLError`` that names no option.
    """
    section = conf[group]
    if not enabled(section):
        return
    for name, other in (('ssl_cert_file', 'ssl_key_file'), ('ssl_key_file', 'ssl_cert_file')):
        if not section[name]:
            where = config.name_option(conf, other, group)
            raise config.ConfigError(f'{where} is set but [{group}] {name} is not: '
                                     f'HTTPS needs both the certificate and its key')
        if not os.access(section[name], os.R_OK):
            where = config.name_option(conf, name, group)
            raise config.ConfigError(f'{where}: cannot read {section[name]}')
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(section.ssl_cert_file, section.ssl_key_file)
    except (ssl.SSLError, ValueError) as exc:
        where = config.name_option(conf, 'ssl_cert_file', group,
                                   label=f'[{group}] ssl_cert_file and ssl_key_file')
        raise config.ConfigError(
            f'{where}: {section.ssl_cert_file} and {section.ssl_key_file} are not a PEM '
            f'certificate and its unencrypted key: {exc}') from None


def server_options(api) -> dict:
    """granian's ``Server`` arguments for ``[api]`` ``api``: its certificate and key, or none."""
    if not enabled(api):
        return {}
    return {'ssl_cert': Path(api.ssl_cert_file), 'ssl_key': Path(api.ssl_key_file)}


def scheme(api) -> str:
    return 'https' if enabled(api) else 'http'
