"""Two scheduler workers (two selectors, two host caches, as two processes) share one Placement.

Each worker knows only its own claims; Placement's checks are what keeps
them from overcommitting a host. The race is replayed deterministically:
worker B reads the candidates, worker A claims the last room on the best
host, then B (with its now stale view) tries that host, is refused, and
moves on to the next one.
"""
from __future__ import annotations

import threading
import uuid as uuidlib

from oslo_config import cfg

from cellplane import conf as shared_conf
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import RequestSpec
from scheduler import conf as scheduler_conf
from scheduler.destinations import DestinationSelector
from scheduler.host_cache import HostStateCache
from scheduler.host_state import CellNodeRecord
from scheduler.placement_adapter import PlacementAdapter
from scheduler.plugins import load_from_conf
from scheduler.trace import CLAIMED, CONFLICT
from tests.functional.scheduler.conftest import add_compute_node

CELL = 'cell-1'
INSTANCE_A = 'aaaaaaaa-0000-4000-8000-000000000001'
INSTANCE_B = 'bbbbbbbb-0000-4000-8000-000000000002'


def _conf():
    conf = cfg.ConfigOpts()
    shared_conf.register_opts(conf)
    scheduler_conf.register_opts(conf)
    conf([], default_config_files=[], default_config_dirs=[])
    return conf


def _worker(candidate_source, claimer, nodes: dict[str, str], *,
            batch_claims: bool = False) -> DestinationSelector:
    """One scheduler worker: its own cache, filled from 'the cell database'."""
    cache = HostStateCache()
    cache.set_records([CellNodeRecord(uuid=uuid, host=host, nodename=host,
                                         cell_uuid=CELL) for host, uuid in nodes.items()])
    filters, weighers = load_from_conf(_conf())
    return DestinationSelector(candidate_source=candidate_source, claimer=claimer,
                               cache=cache, filters=filters, weighers=weighers,
                               batch_claims=batch_claims)


def _spec(vcpus=1, memory_mb=1024, root_gb=10):
    return RequestSpec(flavor=Flavor(name='f', vcpus=vcpus, memory_mb=memory_mb,
                                     root_gb=root_gb), project_id='proj', user_id='user')


class _OtherWorkerClaimsDuringRead:
    """Worker B's view of Placement: while B's read is in flight, worker A schedules."""

    def __init__(self, adapter: PlacementAdapter, other_worker_runs) -> None:
        self.microversion = adapter.microversion
        self._adapter = adapter
        self._other_worker_runs = other_worker_runs

    def allocation_candidates(self, query):
        answer = self._adapter.allocation_candidates(query)
        self._other_worker_runs()
        return answer


def test_two_workers_racing_for_the_last_room_on_a_host_one_wins_the_other_moves_on(
        placement):
    # 'best' has the most free memory and disk (the weighers prefer it) but
    # room for exactly one instance (1 VCPU); 'next' has room for two.
    nodes = {'best': add_compute_node(placement, 'best', vcpus=1, memory_mb=8192,
                                      disk_gb=200),
             'next': add_compute_node(placement, 'next', vcpus=2, memory_mb=2048,
                                      disk_gb=100)}
    adapter = PlacementAdapter(placement)
    worker_a = _worker(adapter, adapter, nodes)
    won = []

    def worker_a_schedules():
        won.append(worker_a.select_destinations(_spec(), [INSTANCE_A], 0))

    worker_b = _worker(_OtherWorkerClaimsDuringRead(adapter, worker_a_schedules),
                       adapter, nodes)
    lost = worker_b.select_destinations(_spec(), [INSTANCE_B], 0)

    [[a_selection]] = won[0].selections
    [[b_selection]] = lost.selections
    assert a_selection.service_host == 'best'
    assert b_selection.service_host == 'next'
    [b_trace] = lost.trace.instances
    assert [(c.host, c.outcome) for c in b_trace.claims] == \
        [('best', CONFLICT), ('next', CLAIMED)]
    # No overcommit: the one VCPU of 'best' is held by A alone.
    assert placement.get_allocations(INSTANCE_A).allocations == {
        nodes['best']: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
    assert placement.get_allocations(INSTANCE_B).allocations == {
        nodes['next']: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}


def test_a_batch_claim_that_loses_the_race_claims_nothing_and_walks_again(placement):
    # B multi-creates two: its stale view puts one on 'best' (room for one)
    # and one on 'next'; A takes 'best' meanwhile, so Placement refuses B's
    # whole batch and B, reading afresh, puts both on 'next'.
    nodes = {'best': add_compute_node(placement, 'best', vcpus=1, memory_mb=8192,
                                      disk_gb=200),
             'next': add_compute_node(placement, 'next', vcpus=2, memory_mb=4096,
                                      disk_gb=100)}
    adapter = PlacementAdapter(placement)
    worker_a = _worker(adapter, adapter, nodes)
    a_ran = []

    def worker_a_schedules_once():
        if not a_ran:
            a_ran.append(worker_a.select_destinations(_spec(), [INSTANCE_A], 0))
    worker_b = _worker(_OtherWorkerClaimsDuringRead(adapter, worker_a_schedules_once),
                       adapter, nodes, batch_claims=True)
    b_instances = [INSTANCE_B, 'bbbbbbbb-0000-4000-8000-000000000003']

    result = worker_b.select_destinations(_spec(), b_instances, 0)

    assert result.trace.batch_claim == 'fell_back'
    assert 'Placement refused the batch' in result.trace.batch_claim_refusal
    assert [s[0].service_host for s in result.selections] == ['next', 'next']
    assert placement.get_allocations(INSTANCE_A).allocations == {
        nodes['best']: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}
    for instance in b_instances:
        assert placement.get_allocations(instance).allocations == {
            nodes['next']: {'VCPU': 1, 'MEMORY_MB': 1024, 'DISK_GB': 10}}


def test_two_workers_filling_every_host_in_parallel_place_exactly_the_capacity(placement):
    # 3 hosts x 4 VCPU = 12 instances of 1 VCPU; two workers ask for 8 each.
    nodes = {f'h{i}': add_compute_node(placement, f'h{i}', vcpus=4, memory_mb=8192,
                                       disk_gb=200) for i in range(3)}
    adapter = PlacementAdapter(placement)
    workers = [_worker(adapter, adapter, nodes) for _ in range(2)]
    placed: dict[str, str] = {}
    refused: list[str] = []
    lock = threading.Lock()

    def run(worker):
        for _ in range(8):
            instance = str(uuidlib.uuid4())
            try:
                [[selection]] = worker.select_destinations(
                    _spec(), [instance], 0).selections
            except Exception as exc:  # noqa: BLE001 - NoValidHost once full
                assert type(exc).__name__ == 'NoValidHost', exc
                with lock:
                    refused.append(instance)
            else:
                with lock:
                    placed[instance] = selection.service_host

    threads = [threading.Thread(target=run, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(placed) == 12 and len(refused) == 4
    per_node = {uuid: 0 for uuid in nodes.values()}
    for instance in placed:
        for provider, resources in placement.get_allocations(instance).allocations.items():
            per_node[provider] += resources['VCPU']
    assert per_node == {uuid: 4 for uuid in nodes.values()}
    for instance in refused:
        assert placement.get_allocations(instance).allocations == {}
