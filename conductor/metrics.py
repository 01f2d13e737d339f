"""The conductors' Prometheus metrics (served by the daemon: ``cellplane/metrics.py``).

Super conductor: instances taken to place, placed, and failed by reason.
Cell conductor: reschedules by cause, builds ended by state, and (at each
scrape, one query of its cell database) how old its compute services'
heartbeats are and how many are up, down or disabled: a histogram and
three counts per cell, whatever the number of hosts.
"""
from __future__ import annotations

import prometheus_client
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from sqlalchemy.engine import Engine

from cellplane.db.columns import utcnow
from cellplane.objects import services
from cellplane.objects.compute_nodes import COMPUTE_BINARY

INSTANCES_TAKEN = prometheus_client.Counter(
    'cellplane_instances_taken', 'Instances a super conductor took to place, by how: '
    'boot (its message), resume (left by a dead super conductor, or never picked up).',
    ['via'])
INSTANCES_PLACED = prometheus_client.Counter(
    'cellplane_instances_placed', 'Instances written into a cell with their build cast '
    'to the chosen host.')
INSTANCES_FAILED = prometheus_client.Counter(
    'cellplane_instances_failed', 'Instances that failed before reaching a host, by '
    'reason: no_valid_host, scheduler_refused, scheduler_error, scheduler_silent, '
    'cell_write.', ['reason'])
RESCHEDULES = prometheus_client.Counter(
    'cellplane_reschedules', 'Builds (and moves) a cell conductor moved to an alternate, by cause: '
    'build_failed (the host said so), host_down, not_started (a lost cast), '
    'timed_out (past build_timeout), lease_expired (a reschedule whose conductor stopped), '
    'move_failed (a move\'s destination said so).', ['cause'])
BUILDS_ENDED = prometheus_client.Counter(
    'cellplane_builds_ended', 'Builds that ended, by state: active, error.', ['state'])

AGE_BUCKETS = (1, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)


class ComputeHeartbeats:
    """A collector: the heartbeat ages and states of one cell's compute services, read at scrape."""

    def __init__(self, engine: Engine, cell: str, service_down_time: float) -> None:
        self._engine = engine
        self._cell = cell
        self._down_after = service_down_time

    def collect(self):
        rows = [r for r in services.list_all(self._engine) if r['binary'] == COMPUTE_BINARY]
        now = utcnow()
        ages = [(now - r['last_seen_at']).total_seconds() if r['last_seen_at'] else None
                for r in rows]
        buckets = [[str(bound), sum(1 for a in ages if a is not None and a <= bound)]
                   for bound in AGE_BUCKETS] + [['+Inf', len(ages)]]
        histogram = HistogramMetricFamily(
            'cellplane_compute_heartbeat_age_seconds', 'Seconds since each compute '
            'service of the cell was last heard of (never heard of: only in +Inf).',
            labels=['cell'])
        histogram.add_metric([self._cell], buckets,
                             sum_value=sum(a for a in ages if a is not None))
        yield histogram
        counts = GaugeMetricFamily('cellplane_compute_services', 'Compute services of '
                                   'the cell, by state: up, down (silent for '
                                   'service_down_time), disabled.', labels=['cell', 'state'])
        up = sum(1 for r in rows
                 if services.is_up(r, service_down_time=self._down_after, now=now))
        counts.add_metric([self._cell, 'up'], up)
        counts.add_metric([self._cell, 'down'], len(rows) - up)
        counts.add_metric([self._cell, 'disabled'], sum(1 for r in rows if r['disabled']))
        yield counts
