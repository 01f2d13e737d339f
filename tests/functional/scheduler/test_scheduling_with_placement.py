"""The scheduler against the real Placement (in-process, SQLite): claims, conflicts, rollback."""
from __future__ import annotations

import urllib.parse
import uuid

import pytest

from placement.client import Inventory
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import InstanceGroup, RequestedDestination, RequestSpec
from scheduler.destinations import DestinationSelector
from scheduler.errors import ConsumerAlreadyAllocated, NoValidHost
from scheduler.host_cache import HostStateCache
from scheduler.host_state import CellNodeRecord
from scheduler.instance_locator import PlacementInstanceLocator
from scheduler.placement_adapter import PlacementAdapter
from scheduler.plugins import load_filters
from scheduler.records.record import SchedulingRecord
from scheduler.trace import CONFLICT
from scheduler.weighers.ram import RAMWeigher
from tests.functional.scheduler.conftest import add_compute_node

CELL1, CELL2 = 'cell-1', 'cell-2'
# Placement wants real UUIDs as consumers.
I1, I2, I3, I4, BIG, OTHER = (str(uuid.uuid4()) for _ in range(6))
FILTERS = ['ComputeFilter', 'ResourceFitFilter', 'ServerGroupAntiAffinityFilter']


def _spec(memory_mb=1024, **kwargs):
    return RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=memory_mb, root_gb=10),
                       project_id='proj', user_id='user', **kwargs)


class Interleaving(PlacementAdapter):
    """Runs ``during_read`` once, after Placement answered and before the scheduler sees it."""

    during_read = None

    def allocation_candidates(self, query):
        answer = super().allocation_candidates(query)
        if self.during_read is not None:
            hook, self.during_read = self.during_read, None
            hook()
        return answer


@pytest.fixture
def nodes(placement):
    uuids = {name: add_compute_node(placement, name, memory_mb=mb)
             for name, mb in (('a', 4096), ('b', 3072), ('c', 8192))}
    return uuids


def _cache(nodes):
    cache = HostStateCache()
    cache.set_records([CellNodeRecord(uuid=uuid, host=name, nodename=name,
                                         cell_uuid=CELL2 if name == 'c' else CELL1)
                       for name, uuid in nodes.items()])
    return cache


def _selector(placement, nodes, adapter=None, *, cache=None, locator=None):
    adapter = adapter or PlacementAdapter(placement)
    return DestinationSelector(candidate_source=adapter, claimer=adapter,
                               cache=cache or _cache(nodes),
                               filters=load_filters(FILTERS + ['DifferentHostFilter']),
                               weighers=[RAMWeigher(-1.0)], max_results=50,
                               instance_locator=locator)


def test_claims_in_placement_and_returns_same_cell_alternates(placement, nodes):
    # RAM multiplier -1 packs: the fullest host first (b, 3072 MB), then a.
    result = _selector(placement, nodes).select_destinations(_spec(), [I1], 2)
    (selections,) = result.selections
    assert [s.service_host for s in selections] == ['b', 'a']
    assert placement.get_allocations(I1).allocations == {
        nodes['b']: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
    assert selections[1].allocation_request['allocations'] == {
        nodes['a']: {'resources': {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}}
    assert placement.get_allocations(I2).allocations == {}


def test_alternate_allocation_request_claims_in_placement(placement, nodes):
    result = _selector(placement, nodes).select_destinations(_spec(), [I1], 1)
    claimed, alternate = result.selections[0]
    # What the cell conductor does on a reschedule: unclaim, claim the alternate.
    placement.unclaim(I1)
    placement.claim(I1, alternate.allocation_request['allocations'],
                    project_id='proj', user_id='user')
    assert list(placement.get_allocations(I1).allocations) == [alternate.compute_node_uuid]


def test_host_filled_by_another_worker_during_the_read_loses_the_claim_and_next_wins(
        placement, nodes):
    adapter = Interleaving(placement)
    # Another scheduler worker fills b (3072 MB) between our read and our claim.
    adapter.during_read = lambda: placement.claim(
        OTHER, {nodes['b']: {'MEMORY_MB': 3072}}, project_id='p', user_id='u')
    result = _selector(placement, nodes, adapter).select_destinations(_spec(), [I1], 0)
    assert result.selections[0][0].service_host == 'a'
    lost = result.trace.instances[0].claims[0]
    assert (lost.host, lost.outcome) == ('b', CONFLICT)
    assert lost.detail.startswith('Placement')
    # Placement's own error code reaches the trace (the scheduling record):
    # capacity exceeded has no specific code in Placement.
    assert lost.code == 'placement.undefined_code'


def test_own_claim_during_the_read_is_not_retried_against_placement(placement, nodes):
    adapter = Interleaving(placement)
    selector = _selector(placement, nodes, adapter)
    done = {}
    # Our own worker places a 3 GB instance on b while this read is in flight.
    adapter.during_read = lambda: done.setdefault(
        'big', selector.select_destinations(_spec(memory_mb=3072), [BIG], 0))
    result = selector.select_destinations(_spec(), [I1], 0)
    assert done['big'].selections[0][0].service_host == 'b'
    assert result.selections[0][0].service_host == 'a'
    assert result.trace.instances[0].lost_claims() == 0


def test_multi_create_that_cannot_finish_leaves_no_allocation_behind(placement, nodes):
    group = InstanceGroup(uuid='g', policy='anti-affinity')
    with pytest.raises(NoValidHost, match='4 of 4'):
        _selector(placement, nodes).select_destinations(
            _spec(instance_group=group), [I1, I2, I3, I4], 0)
    for consumer in (I1, I2, I3, I4):
        assert placement.get_allocations(consumer).allocations == {}
    assert not any(placement.usages('proj').values())


def test_required_trait_is_enforced_by_placement(placement, nodes):
    gpu = add_compute_node(placement, 'g', memory_mb=1024, traits=('CUSTOM_GPU',))
    selector = _selector(placement, {**nodes, 'g': gpu})
    spec = RequestSpec(flavor=Flavor(name='gpu', vcpus=1, memory_mb=512,
                                     extra_specs={'trait:CUSTOM_GPU': 'required'}),
                       project_id='proj', user_id='user')
    result = selector.select_destinations(spec, [I1], 3)
    assert [s.service_host for s in result.selections[0]] == ['g']


def test_different_host_hint_is_located_through_placement_allocations(placement, nodes):
    placement.claim(OTHER, {nodes['b']: {'MEMORY_MB': 512}}, project_id='p', user_id='u')
    cache = _cache(nodes)
    locator = PlacementInstanceLocator(placement, cache)
    assert locator.hosts_of([OTHER, I4]) == {OTHER: 'b'}
    selector = _selector(placement, nodes, cache=cache, locator=locator)
    result = selector.select_destinations(
        _spec(scheduler_hints={'different_host': [OTHER]}), [I1], 5)
    assert [s.service_host for s in result.selections[0]] == ['a']


def test_an_instance_that_already_has_allocations_stops_the_walk_at_once(placement, nodes):
    placement.claim(I1, {nodes['c']: {'MEMORY_MB': 512}}, project_id='proj', user_id='user')
    adapter = PlacementAdapter(placement)
    attempts = []
    real_claim = adapter.claim
    adapter.claim = lambda *args: attempts.append(args[0]) or real_claim(*args)
    with pytest.raises(ConsumerAlreadyAllocated, match=f'DELETE /allocations/{I1}'):
        _selector(placement, nodes, adapter).select_destinations(_spec(), [I1], 0)
    assert attempts == [I1]
    assert list(placement.get_allocations(I1).allocations) == [nodes['c']]


def test_earlier_claims_are_removed_when_a_later_instance_is_already_allocated(
        placement, nodes):
    placement.claim(I2, {nodes['c']: {'MEMORY_MB': 512}}, project_id='proj', user_id='user')
    with pytest.raises(ConsumerAlreadyAllocated):
        _selector(placement, nodes).select_destinations(_spec(), [I1, I2], 0)
    assert placement.get_allocations(I1).allocations == {}


def test_no_valid_host_says_whether_max_unit_or_free_capacity_refused_a_resource(placement):
    small = add_compute_node(placement, 'small', vcpus=8)
    capped = add_compute_node(placement, 'capped', vcpus=64)
    placement.set_inventory(capped, {'VCPU': Inventory(64, max_unit=16),
                                     'MEMORY_MB': Inventory(4096), 'DISK_GB': Inventory(100)})
    selector = _selector(placement, {'small': small, 'capped': capped})
    wants = {vcpus: RequestSpec(flavor=Flavor(name=f'v{vcpus}', vcpus=vcpus, memory_mb=512,
                                              root_gb=1), project_id='proj', user_id='user')
             for vcpus in (20, 100)}

    with pytest.raises(NoValidHost) as twenty:
        selector.select_destinations(wants[20], [I1], 0)
    with pytest.raises(NoValidHost) as hundred:
        selector.select_destinations(wants[100], [I2], 0)

    # 64 free on 'capped', but one allocation may take 16 at most.
    assert ('VCPU:20: at most 16 in one allocation on any provider (its max_unit or '
            'step_size; that provider has 64 free)') in str(twenty.value)
    assert twenty.value.trace.shortage_limits == [
        'VCPU:20: at most 16 in one allocation on any provider (its max_unit or '
        'step_size; that provider has 64 free)']
    assert 'VCPU:100: at most 16 in one allocation' in str(hundred.value)
    placement.set_inventory(capped, {'VCPU': Inventory(64, max_unit=64),
                                     'MEMORY_MB': Inventory(4096), 'DISK_GB': Inventory(100)})
    with pytest.raises(NoValidHost) as free:
        selector.select_destinations(wants[100], [I3], 0)
    assert 'VCPU:100: the most free on any one provider is 64' in str(free.value)


class RecordingTransport:
    """Placement's transport, keeping the path of every request sent."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.paths: list[str] = []

    def request(self, method, path, body=None, microversion=None):
        self.paths.append(path)
        return self.inner.request(method, path, body, microversion)


def test_the_scheduling_record_shows_the_query_placement_was_sent(placement, nodes):
    # One aggregate (Placement takes "in:" for it too) and several resources:
    # the two the record once showed differently from what was sent.
    aggregate = str(uuid.uuid4())
    placement.set_aggregates(nodes['a'], [aggregate])
    sent = RecordingTransport(placement.transport.inner)
    placement.transport.inner = sent
    spec = _spec(requested_destination=RequestedDestination(aggregates=[aggregate]))

    result = _selector(placement, nodes).select_destinations(spec, [I1], 0)

    assert result.selections[0][0].service_host == 'a'
    asked = [urllib.parse.urlsplit(p).query for p in sent.paths
             if p.startswith('/allocation_candidates?')]
    record = SchedulingRecord.from_trace(result.trace)
    recorded = urllib.parse.urlencode([tuple(p) for p in record.body['placement']['query']])
    assert asked == [recorded]
    assert ('member_of', f'in:{aggregate}') in urllib.parse.parse_qsl(asked[0])
    assert ('resources', 'DISK_GB:10,MEMORY_MB:1024,VCPU:1') in urllib.parse.parse_qsl(asked[0])
