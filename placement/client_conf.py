"""The ``[placement]`` options of every service that talks to Placement, and the client built from them.

A compute agent, a cell conductor and the scheduler each reach Placement
over HTTP with these; the embedded mode builds ``PlacementClient.in_process``
itself and reads none of them. (The options of the Placement service itself
are in ``placement/conf.py``.)
"""
from __future__ import annotations

from oslo_config import cfg

from placement.client import PlacementClient

placement_group = cfg.OptGroup('placement', title='Reaching the Placement service')
placement_opts = [
    cfg.URIOpt('endpoint_url', schemes=['http', 'https'],
               help='Base URL of the Placement API, e.g. http://127.0.0.1:8778.'),
    cfg.StrOpt('token', default='admin', secret=True,
               help='Token sent as X-Auth-Token. With Placement\'s '
                    'auth_strategy = tokens, one of its token_file entries with '
                    'the admin or service role.'),
    cfg.FloatOpt('timeout', default=30.0, min=0.1,
                 help='Seconds to wait for one Placement answer.'),
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


class PlacementNotConfigured(Exception):
    """A service that must reach Placement was given no ``[placement] endpoint_url``."""


def register_opts(conf: cfg.ConfigOpts) -> None:
    # A fresh OptGroup per ConfigOpts, so overrides never leak between configs.
    conf.register_group(cfg.OptGroup(placement_group.name, title=placement_group.title))
    conf.register_opts(placement_opts, group=placement_group.name)


def list_opts():
    return [(placement_group, placement_opts)]


def client_from_conf(conf: cfg.ConfigOpts, service_name: str) -> PlacementClient:
    """A ``PlacementClient`` over HTTP as ``[placement]`` describes it."""
    group = conf.placement
    if not group.endpoint_url:
        raise PlacementNotConfigured(
            f'{service_name} needs [placement] endpoint_url (the Placement API, '
            f'e.g. http://127.0.0.1:8778) to claim and report resources')
    return PlacementClient.over_http(group.endpoint_url, token=group.token,
                                     timeout=group.timeout,
                                     attempts=group.connect_attempts,
                                     retry_timeout=group.retry_timeout)
