"""The claim walk holds each instance's claim, cache assumption and group place on one stack."""
from __future__ import annotations

import pytest

from rpc_schemas.request_spec import InstanceGroup
from scheduler.claim_walk import select_hosts
from scheduler.claims import BatchClaimRefused, ClaimRefused, RequestClaims
from scheduler.errors import NoValidHost
from scheduler.filters.compute import ComputeFilter
from scheduler.host_cache import HostStateCache
from scheduler.server_group.anti_affinity_filter import ServerGroupAntiAffinityFilter
from scheduler.server_group.places import GroupPlaces
from scheduler.trace import SchedulingTrace
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import DEFAULT_REQUEST, FakeClaimer, host, spec
from tests.unit.scheduler.server_group.test_places import FakeBook

RACK = {'a': 'r1', 'b': 'r2'}


class Events:
    """One log of every undo, from Placement, the cache and the group's book."""

    def __init__(self):
        self.undone: list[tuple[str, str]] = []


class LoggingClaimer(FakeClaimer):
    def __init__(self, events, **kw):
        super().__init__(**kw)
        self._events = events

    def unclaim(self, consumer_uuid):
        self._events.undone.append(('claim', consumer_uuid))
        if consumer_uuid in getattr(self, 'broken', ()):
            raise ConnectionError('placement away')
        super().unclaim(consumer_uuid)


class LoggingCache(HostStateCache):
    def __init__(self, events):
        super().__init__()
        self._events = events

    def forget(self, consumer_uuid):
        self._events.undone.append(('assumption', consumer_uuid))
        super().forget(consumer_uuid)


class LoggingBook(FakeBook):
    def __init__(self, events, **kw):
        super().__init__([], **kw)
        self._events = events

    def release(self, uuids):
        self._events.undone += [('place', u) for u in uuids]
        super().release(uuids)


def _host(name):
    return host(name, failure_domains={'rack': RACK[name]})


def _walk(events, claimer, *, instances, hosts, batched=False):
    group = InstanceGroup(uuid='g', name='web', policy='anti-affinity', level='rack')
    places = GroupPlaces.read(group, list(instances), LoggingBook(events), None,
                              lambda h, level: RACK.get(h))
    trace = SchedulingTrace(project_id='p', num_instances=len(instances),
                            num_alternates=0, candidate_hosts=len(hosts))
    claims = RequestClaims(claimer, LoggingCache(events), 'p', None, batched=batched)
    return select_hosts(spec=spec(instance_group=group), instance_uuids=list(instances),
                        num_alternates=0, hosts=hosts, resources=DEFAULT_REQUEST,
                        filters=[ComputeFilter(), ServerGroupAntiAffinityFilter()], weighers=[RAMWeigher(1.0)],
                        claims=claims, trace=trace, allocation_request_version='1.36',
                        domain_of_host=lambda h, level: RACK.get(h), places=places)


def test_a_failed_request_gives_back_place_assumption_claim_last_instance_first():
    events = Events()
    # Two racks, three members: the third finds no rack, so all is undone.
    with pytest.raises(NoValidHost):
        _walk(events, LoggingClaimer(events), instances=('i-1', 'i-2', 'i-3'),
              hosts=[_host('a'), _host('b')])
    assert events.undone == [('place', 'i-2'), ('assumption', 'i-2'), ('claim', 'i-2'),
                             ('place', 'i-1'), ('assumption', 'i-1'), ('claim', 'i-1')]


def test_a_claim_that_cannot_be_removed_does_not_keep_the_rest_held():
    events = Events()
    claimer = LoggingClaimer(events)
    claimer.broken = {'i-2'}
    a, b = _host('a'), _host('b')
    free = {h.host: h.free('MEMORY_MB') for h in (a, b)}
    with pytest.raises(NoValidHost) as failed:
        _walk(events, claimer, instances=('i-1', 'i-2', 'i-3'), hosts=[a, b])
    assert ('claim', 'i-1') in events.undone and ('place', 'i-1') in events.undone
    assert claimer.allocations.keys() == {'i-2'}   # left for the operator, logged
    assert failed.value.trace.rolled_back == ['i-1']
    assert a.free('MEMORY_MB') + b.free('MEMORY_MB') < sum(free.values())


class RefusesBatches(LoggingClaimer):
    def claim_many(self, allocation_requests, project_id, user_id):
        raise ClaimRefused('rp-a changed')


def test_a_refused_batch_gives_back_the_places_and_charges_and_writes_nothing():
    events = Events()
    claimer = RefusesBatches(events)
    a, b = _host('a'), _host('b')
    free = {h.host: h.free('MEMORY_MB') for h in (a, b)}
    with pytest.raises(BatchClaimRefused):
        _walk(events, claimer, instances=('i-1', 'i-2'), hosts=[a, b], batched=True)
    # Nothing was written, so nothing is unclaimed in Placement or forgotten
    # by the cache; the places the walk took meanwhile are given back.
    assert events.undone == [('place', 'i-2'), ('place', 'i-1')]
    assert {h.host: h.free('MEMORY_MB') for h in (a, b)} == free
    assert claimer.allocations == {}
