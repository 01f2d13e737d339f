"""The scheduler's Prometheus metrics (served by the daemon: ``cellplane/metrics.py``)."""
from __future__ import annotations

import prometheus_client

SCHEDULING_SECONDS = prometheus_client.Histogram(
    'cellplane_scheduling_seconds', 'Time of each select_destinations, from the request '
    'to the answer (claims included), by outcome: placed, no_valid_host, error.',
    ['outcome'], buckets=(.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60))
INSTANCES_SCHEDULED = prometheus_client.Counter(
    'cellplane_scheduled_instances', 'Instances select_destinations was asked to '
    'place, by outcome: placed, no_valid_host, error.', ['outcome'])
CLAIM_CONFLICTS = prometheus_client.Counter(
    'cellplane_claim_conflicts', 'Claims Placement refused because another scheduler '
    'took the room first (each one is followed by a claim on the next host).')
BATCH_CLAIMS = prometheus_client.Counter(
    'cellplane_batch_claims', 'Multi-creates whose claims were written in one Placement '
    'request, by outcome: claimed, or fell_back (Placement refused the batch, and the '
    'request was scheduled again claiming one instance at a time).', ['outcome'])
RECORDS_DROPPED = prometheus_client.Counter(
    'cellplane_scheduling_records_dropped', 'Scheduling records dropped because the '
    'record queue was full.')
