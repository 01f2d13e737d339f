"""The scheduler's RPC endpoint: ``select_destinations`` for the super conductor.

It checks the arguments, runs one DestinationSelector run and returns one
list of Selection per instance (claimed host first, then alternates). With
a ``migration_uuid`` (API 1.1) the one instance is moving: its claim moves
its source allocation to the migration's consumer (``MoveClaimer``). The
trace of every run, successful or not, goes to ``on_trace`` with the
caller's request id (the daemon queues it for the scheduling record,
``scheduler/records/``). Before each run ``follow_changes`` (the host
refresher's) brings the host cache up to the operator's last change.
NoValidHost is an expected outcome: it is answered to the caller, not
logged as a server error, and counted as a refusal, not an RPC error.
"""
from __future__ import annotations

import logging
import time
from typing import Callable

from oslo_config import cfg

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.db import away

# isort: split
import oslo_messaging as messaging

from placement.client import PlacementUnreachable
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from scheduler import metrics
from scheduler.claims import Claimer
from scheduler.destinations import CandidateSource, DestinationSelector
from scheduler.errors import (
    ConsumerAlreadyAllocated,
    InvalidFlavorExtraSpec,
    InvalidSchedulingRequest,
    NoValidHost,
)
from scheduler.host_cache import HostStateCache
from scheduler.instance_locator import InstanceLocator
from scheduler.plugins import load_from_conf
from scheduler.server_group.book import GroupBook
from scheduler.trace import SchedulingTrace

LOG = logging.getLogger(__name__)

TraceSink = Callable[[SchedulingTrace], None]


class SchedulerManager:
    target = messaging.Target(version='1.1')

    def __init__(self, selector: DestinationSelector, *,
                 on_trace: TraceSink | None = None,
                 follow_changes: Callable[[], object] | None = None,
                 database_retry_timeout: float = 0.0) -> None:
        self._selector = selector
        self._on_trace = on_trace
        self._follow_changes = follow_changes
        self._database_retry_timeout = database_retry_timeout

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts, *, candidate_source: CandidateSource,
                  claimer: Claimer, cache: HostStateCache,
                  instance_locator: InstanceLocator | None = None,
                  group_book: GroupBook | None = None,
                  on_trace: TraceSink | None = None,
                  follow_changes: Callable[[], object] | None = None) -> 'SchedulerManager':
        """A manager with the filters, weighers and limits ``conf`` names."""
        filters, weighers = load_from_conf(conf)
        selector = DestinationSelector(
            candidate_source=candidate_source, claimer=claimer, cache=cache,
            filters=filters, weighers=weighers,
            max_results=conf.scheduler.max_placement_results,
            min_results=conf.scheduler.min_placement_results,
            max_claim_attempts=conf.scheduler.max_claim_attempts,
            batch_claims=conf.scheduler.batch_claims,
            instance_locator=instance_locator, group_book=group_book)
        return cls(selector, on_trace=on_trace, follow_changes=follow_changes,
                   database_retry_timeout=conf.scheduler.database_retry_timeout)

    @messaging.expected_exceptions(NoValidHost, InvalidFlavorExtraSpec,
                                   InvalidSchedulingRequest, ConsumerAlreadyAllocated,
                                   PlacementUnreachable)
    def select_destinations(self, ctxt, request_spec: RequestSpec,
                            instance_uuids: list[str], num_alternates: int,
                            migration_uuid: str | None = None) -> list[list[Selection]]:
        try:
            _check_arguments(request_spec, instance_uuids, num_alternates)
            _check_move(instance_uuids, migration_uuid)
        except InvalidSchedulingRequest as exc:
            # Expected exceptions are logged by oslo.messaging at DEBUG only:
            # a malformed request would go unseen (a cast has no caller).
            LOG.error('Rejected select_destinations: %s', exc)
            raise
        if self._follow_changes is not None:
            self._follow_changes()
        started = time.monotonic()
        outcome = 'error'
        try:
            # A run that meets a database away has given back what it claimed
            # (claim_walk unwinds on any error): it is run again, bounded.
            result = away.retry_while_away(
                lambda: self._selector.select_destinations(
                    request_spec, list(instance_uuids), num_alternates,
                    migration_uuid=migration_uuid),
                timeout=self._database_retry_timeout)
            outcome = 'placed'
        except NoValidHost as exc:
            outcome = 'no_valid_host'
            LOG.info('select_destinations for %s: %s', ', '.join(instance_uuids), exc)
            self._record(exc.trace, ctxt)
            raise
        except PlacementUnreachable as exc:
            # Expected while Placement is away: one line, not a traceback
            # (the client already retried for [placement] retry_timeout).
            LOG.error('select_destinations for %s failed: %s',
                      ', '.join(instance_uuids), exc)
            exc.rpc_outcome = 'error'   # an outage, not a refusal (cellplane.rpc.server)
            raise
        finally:
            metrics.SCHEDULING_SECONDS.labels(outcome).observe(time.monotonic() - started)
            metrics.INSTANCES_SCHEDULED.labels(outcome).inc(len(instance_uuids))
        metrics.CLAIM_CONFLICTS.inc(sum(i.lost_claims() for i in result.trace.instances))
        if result.trace.batch_claim:
            metrics.BATCH_CLAIMS.labels(result.trace.batch_claim).inc()
        self._record(result.trace, ctxt)
        LOG.debug('select_destinations for %s: %s', ', '.join(instance_uuids),
                  '; '.join(f'{s[0].service_host} (+{len(s) - 1} alternates)'
                            for s in result.selections))
        return result.selections

    def _record(self, trace: SchedulingTrace | None, ctxt) -> None:
        if trace is None or self._on_trace is None:
            return
        trace.request_id = getattr(ctxt, 'request_id', None) or ''
        try:
            self._on_trace(trace)
        except Exception:  # a lost record must not fail the boot
            LOG.exception('Could not record the scheduling trace')


def _check_move(instance_uuids, migration_uuid) -> None:
    if migration_uuid is None:
        return
    if not isinstance(migration_uuid, str) or not migration_uuid:
        raise InvalidSchedulingRequest(
            f'migration_uuid must be a non-empty string, not {migration_uuid!r}')
    if len(instance_uuids) != 1:
        raise InvalidSchedulingRequest(
            f'a move (migration {migration_uuid}) places exactly one instance, not '
            f'{len(instance_uuids)}')


def _check_arguments(request_spec, instance_uuids, num_alternates) -> None:
    if not isinstance(request_spec, RequestSpec):
        raise InvalidSchedulingRequest(
            f'select_destinations needs a RequestSpec payload, got '
            f'{type(request_spec).__name__}')
    if (not isinstance(instance_uuids, (list, tuple)) or not instance_uuids
            or not all(isinstance(u, str) and u for u in instance_uuids)):
        raise InvalidSchedulingRequest(
            'select_destinations needs a non-empty list of instance UUIDs')
    if len(set(instance_uuids)) != len(instance_uuids):
        raise InvalidSchedulingRequest(
            'select_destinations got the same instance UUID twice')
    if isinstance(num_alternates, bool) or not isinstance(num_alternates, int) \
            or num_alternates < 0:
        raise InvalidSchedulingRequest(
            f'num_alternates must be a whole number >= 0, not {num_alternates!r}')
