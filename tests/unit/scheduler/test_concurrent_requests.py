"""Several handler threads share one DestinationSelector: no overcommit, no lost request.

Four threads place 60 instances on 100 slots. Whatever the interleaving,
every request has a host with room it can see (usage only grows, and the
cache's conservative double count hides at most one slot per in-flight claim),
so every request must be placed, Placement must never be asked beyond
capacity, and the cache must forget every claim once the reads are over.
"""
from __future__ import annotations

import threading

from scheduler.destinations import DestinationSelector
from scheduler.host_cache import HostStateCache
from scheduler.plugins import load_filters
from scheduler.weighers.ram import RAMWeigher
from tests.unit.scheduler.factories import FakePlacement, flavor, record, spec

HOSTS = 10
SLOTS_PER_HOST = 10
MB = 512
THREADS = 4
REQUESTS_PER_THREAD = 15


class LockedPlacement(FakePlacement):
    """Placement serializes its own transactions; so does this fake."""

    def __init__(self, capacity_mb):
        super().__init__(capacity_mb)
        self._lock = threading.Lock()

    def allocation_candidates(self, query):
        with self._lock:
            return super().allocation_candidates(query)

    def claim(self, *args):
        with self._lock:
            return super().claim(*args)

    def unclaim(self, consumer_uuid):
        with self._lock:
            return super().unclaim(consumer_uuid)


def test_threads_sharing_a_selector_place_every_request_within_capacity():
    names = [f'h{i}' for i in range(HOSTS)]
    placement = LockedPlacement({n: SLOTS_PER_HOST * MB for n in names})
    cache = HostStateCache()
    cache.set_records([record(n) for n in names])
    selector = DestinationSelector(
        candidate_source=placement, claimer=placement, cache=cache,
        filters=load_filters(['ComputeFilter', 'ResourceFitFilter']),
        weighers=[RAMWeigher(-1.0)])
    request_spec = spec(flavor=flavor(vcpus=0, memory_mb=MB, root_gb=0))
    failures: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def worker(index: int) -> None:
        start.wait()
        for n in range(REQUESTS_PER_THREAD):
            try:
                selector.select_destinations(request_spec, [f'i-{index}-{n}'], 1)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion
                failures.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert len(placement.allocations) == THREADS * REQUESTS_PER_THREAD
    assert all(used <= SLOTS_PER_HOST * MB for used in placement.used.values())
    assert sum(placement.used.values()) == THREADS * REQUESTS_PER_THREAD * MB
    assert cache.assumed() == []
