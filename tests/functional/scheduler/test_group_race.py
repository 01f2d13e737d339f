"""Two scheduler workers race for the racks of a hard (anti-)affinity group: the loser goes elsewhere.

Each worker (its own selector and host cache, as two processes) reads the
group's members and places from one API database and claims in one
Placement. The race is replayed deterministically: worker B reads the
group (no member anywhere yet), worker A then schedules its member in
rack r1 and takes r1's place, and B, whose view of the group is stale,
prefers r1 too (its hosts are the roomiest), claims there, is refused the
place, removes that claim and lands in rack r2.
"""
from __future__ import annotations

import dataclasses
import shutil
import uuid as uuidlib

import pytest

from cellplane.cells.databases import CellDatabases
from cellplane.db import engines, migrate
from cellplane.objects import failure_domains, server_group_places, server_groups
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import InstanceGroup, RequestedDestination, RequestSpec
from scheduler.destinations import DestinationSelector
from scheduler.errors import NoValidHost
from scheduler.host_cache import HostStateCache
from scheduler.host_state import CellNodeRecord
from scheduler.instance_locator import PlacementInstanceLocator
from scheduler.placement_adapter import PlacementAdapter
from scheduler.plugins import load_from_conf
from scheduler.server_group.book import ApiGroupBook
from scheduler.trace import CLAIMED, DOMAIN_TAKEN
from tests.functional.scheduler.conftest import add_compute_node
from tests.functional.scheduler.test_two_workers_race import CELL, _conf, _OtherWorkerClaimsDuringRead

R1, R2 = str(uuidlib.uuid4()), str(uuidlib.uuid4())
RACK_OF = {'big1': R1, 'big2': R1, 'small': R2}
A = 'aaaaaaaa-0000-4000-8000-00000000000a'
B = 'bbbbbbbb-0000-4000-8000-00000000000b'

_template: list[str] = []


@pytest.fixture
def api_engine(tmp_path):
    if not _template:
        path = tmp_path.parent / 'group-race-api-template.db'
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync('api', engine)
        engine.dispose()
        _template.append(str(path))
    path = tmp_path / 'api.db'
    shutil.copy(_template[0], path)
    engine = engines.create_engine(f'sqlite:///{path}')
    failure_domains.record_levels(engine, ['rack'])
    yield engine
    engine.dispose()


def _worker(candidate_source, placement, nodes, api_engine) -> DestinationSelector:
    cache = HostStateCache()
    cache.set_records([CellNodeRecord(uuid=uuid, host=host, nodename=host, cell_uuid=CELL,
                                      failure_domains={'rack': RACK_OF[host]})
                       for host, uuid in nodes.items()])
    filters, weighers = load_from_conf(_conf())
    adapter = PlacementAdapter(placement)
    return DestinationSelector(candidate_source=candidate_source, claimer=adapter,
                               cache=cache, filters=filters, weighers=weighers,
                               instance_locator=PlacementInstanceLocator(placement, cache),
                               group_book=ApiGroupBook(CellDatabases(api_engine)))


def test_the_worker_that_loses_a_racks_place_removes_its_claim_and_lands_in_another_rack(
        placement, api_engine):
    nodes = {'big1': add_compute_node(placement, 'big1', memory_mb=65536),
             'big2': add_compute_node(placement, 'big2', memory_mb=65536),
             'small': add_compute_node(placement, 'small', memory_mb=8192)}
    for host, uuid in nodes.items():
        placement.set_aggregates(uuid, [RACK_OF[host]])
    group = server_groups.create(api_engine, project_id='p', user_id='u', name='web',
                                 policy='anti-affinity', level='rack')
    with api_engine.begin() as conn:
        server_groups.add_members(conn, group.uuid, [A, B])
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1024, root_gb=10),
                       project_id='p', user_id='u',
                       instance_group=InstanceGroup(uuid=group.uuid, name='web',
                                                    policy='anti-affinity', level='rack'))
    adapter = PlacementAdapter(placement)
    worker_a = _worker(adapter, placement, nodes, api_engine)
    won = []

    def worker_a_schedules():
        if not won:
            won.append(worker_a.select_destinations(spec, [A], 0))

    worker_b = _worker(_OtherWorkerClaimsDuringRead(adapter, worker_a_schedules),
                       placement, nodes, api_engine)
    lost = worker_b.select_destinations(spec, [B], 0)

    [[a_selection]] = won[0].selections
    [[b_selection]] = lost.selections
    assert RACK_OF[a_selection.service_host] == R1
    assert b_selection.service_host == 'small'
    [b_trace] = lost.trace.instances
    assert [(RACK_OF[c.host], c.outcome) for c in b_trace.claims] == \
        [(R1, DOMAIN_TAKEN), (R2, CLAIMED)]
    assert 'is full: another member of the group took its place first' in \
        b_trace.claims[0].detail
    # B's claim in r1 was removed: each member holds one rack, in Placement too.
    assert list(placement.get_allocations(B).allocations) == [nodes['small']]
    held = {m.instance_uuid: m.domain for m in server_group_places.members(api_engine, group.uuid)}
    assert held == {A: R1, B: R2}


def test_a_failed_request_gives_its_place_back(placement, api_engine):
    nodes = {'big1': add_compute_node(placement, 'big1', memory_mb=65536)}
    placement.set_aggregates(nodes['big1'], [R1])
    group = server_groups.create(api_engine, project_id='p', user_id='u', name='web',
                                 policy='anti-affinity', level='rack')
    with api_engine.begin() as conn:
        server_groups.add_members(conn, group.uuid, [A, B])
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1024, root_gb=10),
                       project_id='p', user_id='u',
                       instance_group=InstanceGroup(uuid=group.uuid, name='web',
                                                    policy='anti-affinity', level='rack'))
    worker = _worker(PlacementAdapter(placement), placement, nodes, api_engine)
    with pytest.raises(NoValidHost) as failed:
        # Two members, one rack: the second cannot be placed, so neither is.
        worker.select_destinations(spec, [A, B], 0)
    assert '1 removed by ServerGroupAntiAffinityFilter' in str(failed.value)
    assert placement.get_allocations(A).allocations == {}
    assert {m.domain for m in server_group_places.members(api_engine, group.uuid)} == {None}


def test_two_first_members_of_an_affinity_group_placed_at_once_end_in_one_rack(
        placement, api_engine):
    # A is sent to r1 (a requested aggregate); B, reading the empty group
    # before A took r1, prefers the roomiest host, in r2: its place there is
    # refused, that claim removed, and it joins A in r1.
    nodes = {'big1': add_compute_node(placement, 'big1', memory_mb=16384),
             'big2': add_compute_node(placement, 'big2', memory_mb=16384),
             'small': add_compute_node(placement, 'small', memory_mb=65536)}
    for host, uuid in nodes.items():
        placement.set_aggregates(uuid, [RACK_OF[host]])
    group = server_groups.create(api_engine, project_id='p', user_id='u', name='db',
                                 policy='affinity', level='rack')
    with api_engine.begin() as conn:
        server_groups.add_members(conn, group.uuid, [A, B])
    spec = RequestSpec(flavor=Flavor(name='f', vcpus=1, memory_mb=1024, root_gb=10),
                       project_id='p', user_id='u',
                       instance_group=InstanceGroup(uuid=group.uuid, name='db',
                                                    policy='affinity', level='rack'))
    to_r1 = dataclasses.replace(spec, requested_destination=RequestedDestination(
        aggregates=[R1]))
    adapter = PlacementAdapter(placement)
    worker_a = _worker(adapter, placement, nodes, api_engine)
    won = []

    def worker_a_schedules():
        if not won:
            won.append(worker_a.select_destinations(to_r1, [A], 0))

    worker_b = _worker(_OtherWorkerClaimsDuringRead(adapter, worker_a_schedules),
                       placement, nodes, api_engine)
    second = worker_b.select_destinations(spec, [B], 0)

    assert RACK_OF[won[0].selections[0][0].service_host] == R1
    assert RACK_OF[second.selections[0][0].service_host] == R1
    [b_trace] = second.trace.instances
    assert [(c.host, c.outcome) for c in b_trace.claims][0] == ('small', DOMAIN_TAKEN)
    assert 'holds another rack first' in b_trace.claims[0].detail
    assert list(placement.get_allocations(B).allocations) != [nodes['small']]
    held = {m.instance_uuid: m.domain for m in server_group_places.members(api_engine, group.uuid)}
    assert held == {A: R1, B: R1}
