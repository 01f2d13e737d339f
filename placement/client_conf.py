"""The ``[placement]`` options of every service that talks to Placement, and the client built from them.

A compute agent, a cell conductor and the scheduler each reach Placement
over HTTP with these; the embedded mode builds ``PlacementClient.in_process``
itself and reads none of them. (The options of the Placement service itself
are in ``placement/conf.py``.)

Two ways to authenticate, as Placement's ``[api] auth_strategy``:

* ``auth_type`` set (``password``, ``v3applicationcredential``, ...): a
  Keystone user, loaded by keystoneauth1 from this section the way Nova
  loads its own ``[placement]`` (``auth_url``, ``username``, ``password``,
  ``project_name``, ``cafile``, ``region_name``, ``valid_interfaces`` ...).
  Placement is found in the service catalog, or at ``endpoint_url`` when
  set.
* ``auth_type`` unset: Placement runs ``noauth2`` (tests, the demo);
  ``token`` is sent as it is to ``endpoint_url``.

Either way an ``https`` Placement's certificate is checked against
``cafile`` (else the system's CAs; ``insecure`` turns the check off), and
``certfile``/``keyfile`` are the client certificate, as keystoneauth1 reads them.
"""
from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

if TYPE_CHECKING:
    from placement.client import PlacementClient

GROUP = 'placement'
placement_group = cfg.OptGroup(GROUP, title='Reaching the Placement service')
placement_opts = [
    cfg.URIOpt('endpoint_url', schemes=['http', 'https'],
               help='Base URL of the Placement API, e.g. http://127.0.0.1:8778. '
                    'Needed without auth_type; with it, overrides the service '
                    'catalog (as endpoint_override does).'),
    cfg.StrOpt('token', default='admin', secret=True,
               help='Without auth_type only (Placement\'s auth_strategy = '
                    'noauth2, for tests and the demo): the X-Auth-Token sent, '
                    '"user[:project]"; the user admin is an administrator. '
                    'Ignored with auth_type.'),
    cfg.ListOpt('roles',
                help='Without auth_type only (noauth2): the roles this service '
                     'asserts, sent as X-Roles with the token (unset: none sent, '
                     'and noauth2 gives the user admin the admin role alone). '
                     '"admin,service" gives it what a Keystone service user of the '
                     'deploy guides holds: the service role lets a compute agent '
                     'write the inventories of many new hosts in one request (the '
                     'reshaper). Ignored with auth_type.'),
    cfg.FloatOpt('retry_timeout', default=30.0, min=0,
                 help='Seconds one request keeps being retried, with backoff '
                      '(0.05 s doubling up to 2 s), while Placement cannot be '
                      'reached (connection refused, timeout) or answers 503: a '
                      'Placement restarting within this fails nothing. Then the '
                      'error names Placement, how long and why.'),
    cfg.IntOpt('connect_attempts', min=1,
               help='If set, also stop retrying a request after this many '
                    'attempts (whichever of this and retry_timeout comes first).'),
]

# Defaults of keystoneauth1's options that differ for Placement (Nova's).
_KEYSTONEAUTH_DEFAULTS = {'timeout': 30, 'service_type': 'placement',
                          'valid_interfaces': ['internal', 'public']}


def keystoneauth_opts() -> list[cfg.Opt]:
    """keystoneauth1's session (timeout, cafile ...), auth (auth_type,
    auth_section) and adapter (service_type, region_name ...) options."""
    opts = copy.deepcopy(ks_loading.get_session_conf_options()
                         + ks_loading.get_auth_common_conf_options()
                         + ks_loading.get_adapter_conf_options(include_deprecated=False))
    for opt in opts:
        if opt.dest in _KEYSTONEAUTH_DEFAULTS:
            opt.default = _KEYSTONEAUTH_DEFAULTS[opt.dest]
    return opts


class PlacementNotConfigured(Exception):
    """``[placement]`` cannot make a client: no ``endpoint_url``, or Keystone options missing or wrong."""


def register_opts(conf: cfg.ConfigOpts) -> None:
    # A fresh OptGroup per ConfigOpts, so overrides never leak between configs.
    conf.register_group(cfg.OptGroup(placement_group.name, title=placement_group.title))
    conf.register_opts(placement_opts + keystoneauth_opts(), group=GROUP)


def list_opts():
    # The password plugin's options, as Nova lists them: the usual choice.
    return [(placement_group, placement_opts + keystoneauth_opts()
             + ks_loading.get_auth_plugin_conf_options('password'))]


def client_from_conf(conf: cfg.ConfigOpts, service_name: str) -> PlacementClient:
    """A ``PlacementClient`` over HTTP as ``[placement]`` describes it."""
    # Imported here: the client imports prometheus_client, which an HTTP daemon
    # registering these options must not import before it set up its metrics.
    from placement.client import KeystoneTransport, PlacementClient
    group = conf.placement
    retry = {'attempts': group.connect_attempts, 'retry_timeout': group.retry_timeout}
    if group.auth_type:
        return PlacementClient(KeystoneTransport(_adapter(conf, service_name), **retry))
    if not group.endpoint_url:
        raise PlacementNotConfigured(
            f'{service_name} needs [placement] endpoint_url (the Placement API, '
            f'e.g. http://127.0.0.1:8778) to claim and report resources, or '
            f'[placement] auth_type and its Keystone options')
    for option in ('cafile', 'certfile', 'keyfile'):
        path = getattr(group, option)
        if path and not os.path.exists(path):
            raise PlacementNotConfigured(
                f'{service_name}: [placement] {option} = {path}: no such file')
    # keystoneauth1's session options, read the way its session would read them.
    verify = group.cafile or not group.insecure
    cert = (group.certfile, group.keyfile) if group.certfile and group.keyfile else \
        group.certfile or None
    return PlacementClient.over_http(group.endpoint_url, token=group.token,
                                     roles=group.roles, timeout=group.timeout,
                                     verify=verify, cert=cert, **retry)


def _adapter(conf: cfg.ConfigOpts, service_name: str):
    """keystoneauth1's auth plugin, session and adapter from ``[placement]``."""
    group = conf.placement
    why = f'{service_name} cannot authenticate to Placement with [placement] auth_type = ' \
          f'{group.auth_type}'
    try:
        auth = ks_loading.load_auth_from_conf_options(conf, GROUP)
        session = ks_loading.load_session_from_conf_options(conf, GROUP, auth=auth)
        return ks_loading.load_adapter_from_conf_options(
            conf, GROUP, session=session, auth=auth,
            endpoint_override=group.endpoint_url or group.endpoint_override)
    except ks_exc.MissingRequiredOptions as exc:
        names = ', '.join(opt.dest for opt in exc.options)
        raise PlacementNotConfigured(f'{why}: [placement] {names} not set') from None
    except ks_exc.NoMatchingPlugin:
        raise PlacementNotConfigured(f'{why}: no such keystoneauth1 plugin') from None
    except cfg.DuplicateOptError as exc:
        # The token plugins' "token" is noauth2's here.
        raise PlacementNotConfigured(
            f'{why}: its option {exc.opt_name} clashes with [placement] {exc.opt_name}; '
            f'use password or v3applicationcredential') from None
    except TypeError as exc:   # keystoneauth1's word for contradictory adapter options
        raise PlacementNotConfigured(f'{why}: {exc}') from None
