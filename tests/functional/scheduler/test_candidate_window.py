"""At scale the scheduler asks Placement for a window of candidates, not for every host.

Placement with ``randomize_allocation_candidates`` answers a ``limit`` with
the candidates found from a random provider on (wrapping around); the
scheduler asks for ``max(min_placement_results, N x (A + 1))`` and asks
again for everything when its filters leave no host in the window.
"""
from __future__ import annotations

import uuid

import pytest

from cellplane.db import engines
from placement.client import PlacementClient
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler.destinations import DestinationSelector
from scheduler.filters.base import HostFilter
from scheduler.host_cache import HostStateCache
from scheduler.host_state import CellNodeRecord
from scheduler.placement_adapter import PlacementAdapter
from scheduler.plugins import load_filters
from scheduler.weighers.ram import RAMWeigher
from tests.functional.scheduler.conftest import _migrated_template, add_compute_node

HOSTS = [f'h{i:02d}' for i in range(20)]


@pytest.fixture
def random_placement(tmp_path):
    import shutil
    path = tmp_path / 'placement.db'
    shutil.copy(_migrated_template(), path)
    engine = engines.create_engine(f'sqlite:///{path}')
    yield PlacementClient.in_process(engine, randomize_candidates=True)
    engine.dispose()


@pytest.fixture
def nodes(random_placement):
    return {name: add_compute_node(random_placement, name) for name in HOSTS}


def test_a_limited_answer_is_a_window_starting_at_a_random_provider(random_placement, nodes):
    seen_first = set()
    for _ in range(40):
        found = random_placement.get_candidates([('resources', 'VCPU:1'), ('limit', '5')])
        providers = [next(iter(r['allocations'])) for r in found.allocation_requests]
        assert len(providers) == len(set(providers)) == 5
        seen_first.add(providers[0])
    # Forty windows of five from twenty hosts do not all start at one host.
    assert len(seen_first) > 5
    # Without a limit, every host, whatever the randomisation.
    assert len(random_placement.get_candidates(
        [('resources', 'VCPU:1')]).allocation_requests) == 20


def test_a_window_wraps_around_to_fill_its_limit(random_placement, nodes):
    for _ in range(30):
        found = random_placement.get_candidates([('resources', 'VCPU:1'), ('limit', '19')])
        assert len(found.allocation_requests) == 19


class OnlyHost(HostFilter):
    """Accepts one named host: a filter Placement cannot express."""

    name = 'OnlyHost'

    def __init__(self, host):
        self.host = host

    def check(self, host, request):
        return None if host.host == self.host else self.reject('not the one host')


def _spec():
    return RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=256, root_gb=1),
                       project_id='proj', user_id='user')


def _selector(placement, nodes, filters, *, min_results):
    adapter = PlacementAdapter(placement)
    cache = HostStateCache()
    cache.set_records([CellNodeRecord(uuid=u, host=n, nodename=n, cell_uuid='cell-1')
                       for n, u in nodes.items()])
    return DestinationSelector(candidate_source=adapter, claimer=adapter, cache=cache,
                               filters=filters, weighers=[RAMWeigher(1.0)],
                               max_results=1000, min_results=min_results)


def test_the_scheduler_asks_for_a_window_sized_by_the_request(random_placement, nodes):
    selector = _selector(random_placement, nodes, load_filters(['ComputeFilter']),
                         min_results=4)
    result = selector.select_destinations(_spec(), [str(uuid.uuid4())], 0)
    assert ('limit', '4') in [tuple(p) for p in result.trace.query]
    assert result.trace.allocation_requests == 4
    # Three instances with one alternate each: 3 x 2 = 6 candidates.
    result = selector.select_destinations(_spec(), [str(uuid.uuid4()) for _ in range(3)], 1)
    assert ('limit', '6') in [tuple(p) for p in result.trace.query]
    assert len(result.selections) == 3


def test_a_window_the_filters_empty_is_asked_again_for_every_candidate(random_placement, nodes):
    selector = _selector(random_placement, nodes,
                         [*load_filters(['ComputeFilter']), OnlyHost('h13')], min_results=2)
    for _ in range(10):
        instance = str(uuid.uuid4())
        result = selector.select_destinations(_spec(), [instance], 0)
        assert result.selections[0][0].service_host == 'h13'
        assert list(random_placement.get_allocations(instance).allocations) == [nodes['h13']]
