"""Prometheus metrics: the ground's own counters, and the ``/metrics`` endpoint a daemon serves when asked.

Every daemon run by ``cellplane.service.Service.run`` serves
``http://[metrics] bind_host:bind_port/metrics`` when ``bind_port`` is set
(off by default). Each service defines its own metrics beside the code
that counts them (``scheduler/metrics.py``, ``conductor/metrics.py``...);
all go to prometheus_client's default registry, so one process (the
embedded mode too) exposes whatever it runs.

Labels stay bounded at any number of hosts: a method label takes only the
names of the endpoints' methods (anything else is ``unknown``), a route
label is the path with its UUIDs replaced, and nothing is labelled by host.
"""
from __future__ import annotations

import logging
import re

import prometheus_client
from oslo_config import cfg

from cellplane import config

LOG = logging.getLogger(__name__)

RPC_MESSAGES = prometheus_client.Counter(
    'cellplane_rpc_messages', 'RPC messages this process dispatched, by method and '
    'outcome: handled, rejected (malformed: refused and logged), refused (the handler '
    'answered with an error it expects, such as NoValidHost), error (the handler '
    'raised; for a call, the caller got it).', ['method', 'outcome'])

PLACEMENT_REQUESTS = prometheus_client.Counter(
    'cellplane_placement_client_requests', 'Requests this process made to Placement, by '
    'method, route (UUIDs replaced by {uuid}) and status (unreachable: no answer '
    'within the retry bound).', ['method', 'route', 'status'])
PLACEMENT_SECONDS = prometheus_client.Histogram(
    'cellplane_placement_client_request_seconds', 'Time of each request to Placement, '
    'retries included.', ['method', 'route'],
    buckets=(.002, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30))

_UUID = re.compile(r'[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?'
                   r'[0-9a-fA-F]{12}')


def route_of(path: str) -> str:
    """``/resource_providers/<uuid>/traits?x=1`` -> ``/resource_providers/{uuid}/traits``."""
    route = _UUID.sub('{uuid}', path.split('?', 1)[0])
    # Custom names (traits, resource classes) would make the label unbounded.
    return re.sub(r'^/(traits|resource_classes)/[^/]+', r'/\1/{name}', route)


class MetricsEndpointError(config.ConfigError):
    """The /metrics endpoint could not be opened (the port is taken, say): the daemon exits 2."""


def serve(conf: cfg.ConfigOpts, registry=prometheus_client.REGISTRY):
    """Start the /metrics endpoint of ``registry`` if ``[metrics] bind_port`` is set; the HTTP server, or None."""
    port = conf.metrics.bind_port
    if not port:
        return None
    host = conf.metrics.bind_host
    try:
        server, _ = prometheus_client.start_http_server(port, addr=host, registry=registry)
    except OSError as exc:
        option = config.name_option(conf, 'bind_port', 'metrics',
                                    label='[metrics] bind_host and bind_port')
        raise MetricsEndpointError(f'cannot serve metrics on {host}:{port} ({option}): '
                                   f'{exc.strerror or exc}') from None
    LOG.info('Serving Prometheus metrics on http://%s:%d/metrics', host, port)
    return server
