"""An HTTP daemon's own /metrics: the requests it served, by route, method and status, and their time.

The daemon runs ``[api] workers`` processes (granian); each counts the
requests it serves, and the main process serves ``/metrics`` for all of
them at ``[metrics] bind_host:bind_port`` (off by default), in
prometheus_client's multiprocess mode: the main process points
``PROMETHEUS_MULTIPROC_DIR`` at a directory of its own before anything
imports prometheus_client, the workers it forks inherit it and write their
counts there, and the main's collector adds them up. The directory goes
when the daemon stops. The route label is the route's template
(``/servers/{server_id}``; ``unmatched`` for a path no route has), so no
UUID or name makes a series of its own.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
import threading
import time

MULTIPROC_DIR_ENV = 'PROMETHEUS_MULTIPROC_DIR'
UNMATCHED = 'unmatched'


@dataclasses.dataclass
class Endpoint:
    """The main process's /metrics server and the directory the workers write to."""

    directory: str
    server: object

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        shutil.rmtree(self.directory, ignore_errors=True)


def start(conf, service: str) -> Endpoint | None:
    """In the main process, before the workers fork: the endpoint, or None when off.

    A port it cannot open is ``cellplane.metrics.MetricsEndpointError``, a
    ``ConfigError``, as for every other daemon.
    """
    if not conf.metrics.bind_port:
        return None
    if 'prometheus_client' in sys.modules:
        # Its values would already be per process: the workers' counts lost.
        raise RuntimeError(f'prometheus_client was imported before {service} set up '
                           f'its multiprocess metrics')
    directory = tempfile.mkdtemp(prefix=f'cellplane-{service}-metrics-')
    os.environ[MULTIPROC_DIR_ENV] = directory
    # Imported only now, with the directory set.
    from prometheus_client import CollectorRegistry, multiprocess

    from cellplane import metrics
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)
    try:
        return Endpoint(directory, metrics.serve(conf, registry))
    except metrics.MetricsEndpointError:
        shutil.rmtree(directory, ignore_errors=True)
        raise


# service -> (requests counter, seconds histogram), created by a worker's first request.
_request_metric_pairs: dict[str, tuple] = {}
_creating = threading.Lock()


def _request_metrics(service: str, title: str):
    pair = _request_metric_pairs.get(service)
    if pair is None:
        # A worker's first requests arrive together on its threads: two
        # creating the metrics at once would register the same names twice,
        # which prometheus_client refuses (that request then answered 500).
        with _creating:
            pair = _request_metric_pairs.get(service)
            if pair is None:
                pair = _request_metric_pairs[service] = _new_request_metrics(service, title)
    return pair


def _new_request_metrics(service: str, title: str):
    # Created on first use, in the worker: after the main set the directory.
    import prometheus_client
    requests = prometheus_client.Counter(
        f'cellplane_{service}_requests', f'Requests {title} served, by method, route '
        'template and status.', ['method', 'route', 'status'])
    seconds = prometheus_client.Histogram(
        f'cellplane_{service}_request_seconds', f'Time {title} took to answer, by '
        'method and route template.', ['method', 'route'],
        buckets=(.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10))
    return requests, seconds


def observe(service: str, title: str, method: str, route: str, status: str,
            seconds: float) -> None:
    """Count one request served (``status``: ``'200 OK'`` or the code alone)."""
    requests, histogram = _request_metrics(service, title)
    requests.labels(method, route, status.split(' ', 1)[0]).inc()
    histogram.labels(method, route).observe(seconds)


def counted(environ, start_response, answer, observe_request) -> object:
    """Serve with ``answer(environ, start_response, seen)`` and observe the request.

    ``answer`` puts the route it matched in ``seen['route']``; the status is
    read as it is started. ``observe_request(method, route, status,
    seconds)`` counts it (each service's ``observe``).
    """
    started = time.monotonic()
    seen: dict = {}

    def counted_start_response(status, headers, *args):
        seen['status'] = status
        return start_response(status, headers, *args)
    body = answer(environ, counted_start_response, seen)
    observe_request(environ.get('REQUEST_METHOD', '?'), seen.get('route', UNMATCHED),
                    seen.get('status', '500'), time.monotonic() - started)
    return body
