"""The host cache re-applies its own claims to data read before they were confirmed (seed 003)."""
from __future__ import annotations

from placement.client import Candidates
from scheduler.filters.resource_fit import ResourceFitFilter
from scheduler.host_cache import HostStateCache
from tests.unit.scheduler.factories import allocation_request, candidates_body, record, scheduling_request

FLAVOR_MB = 400
NODE_MB = 1489  # fits three 400 MB instances, as in the bug report


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _cache(clock=None):
    cache = HostStateCache(assume_seconds=300, clock=clock or FakeClock())
    cache.set_records([record(n) for n in ('node2', 'node3', 'node4')])
    return cache


def _reply(used_mb: dict[str, int]):
    return Candidates.from_body(candidates_body(
        {f'rp-{n}': {'MEMORY_MB': {'capacity': NODE_MB, 'used': mb}}
         for n, mb in used_mb.items()}, request={'MEMORY_MB': FLAVOR_MB}))


def _claim(n: int, node: str) -> tuple[str, dict]:
    return f'inst-{n}', allocation_request(f'rp-{node}', {'MEMORY_MB': FLAVOR_MB})


def _by_host(states):
    return {h.host: h for h in states.hosts}


def test_stale_read_right_after_a_claim_does_not_resurrect_the_capacity():
    """Seed 003: node4 holds two instances, a third is claimed while another
    request's read is in flight; that read (which shows two) must still count three."""
    cache = _cache()
    with cache.reading() as stale_token:
        # Another request claims the third slot of node4 while this read runs.
        cache.assume(*_claim(3, 'node4'))
        stale = _reply({'node2': 0, 'node3': 0, 'node4': 2 * FLAVOR_MB})
        states = _by_host(cache.host_states(stale, stale_token))
    node4 = states['node4']
    assert node4.free('MEMORY_MB') == NODE_MB - 3 * FLAVOR_MB
    request = scheduling_request(resources={'MEMORY_MB': FLAVOR_MB})
    assert ResourceFitFilter().check(node4, request) is not None
    assert ResourceFitFilter().check(states['node2'], request) is None


def test_a_read_begun_after_the_claim_is_trusted_and_not_double_counted():
    cache = _cache()
    cache.assume(*_claim(3, 'node4'))
    with cache.reading() as token:
        fresh = _reply({'node4': 3 * FLAVOR_MB})
        states = _by_host(cache.host_states(fresh, token))
    assert states['node4'].free('MEMORY_MB') == NODE_MB - 3 * FLAVOR_MB


def test_claim_is_kept_while_an_older_read_is_in_flight_even_if_a_newer_one_ended():
    cache = _cache()
    with cache.reading() as old_token:
        cache.assume(*_claim(3, 'node4'))
        with cache.reading():
            pass  # a newer read starts and ends: it showed the claim
        states = _by_host(cache.host_states(
            _reply({'node4': 2 * FLAVOR_MB}), old_token))
    assert states['node4'].free('MEMORY_MB') == NODE_MB - 3 * FLAVOR_MB


def test_claim_is_forgotten_once_no_read_older_than_it_remains():
    cache = _cache()
    with cache.reading():
        cache.assume(*_claim(3, 'node4'))
        assert cache.assumed() == ['inst-3']
    assert cache.assumed() == []


def test_unclaimed_claim_is_no_longer_applied():
    cache = _cache()
    with cache.reading() as token:
        cache.assume(*_claim(3, 'node4'))
        cache.forget('inst-3')
        states = _by_host(cache.host_states(_reply({'node4': 2 * FLAVOR_MB}), token))
    assert states['node4'].free('MEMORY_MB') == NODE_MB - 2 * FLAVOR_MB


def test_claim_expires_even_if_a_read_never_finishes():
    clock = FakeClock()
    cache = _cache(clock)
    with cache.reading() as token:
        cache.assume(*_claim(3, 'node4'))
        clock.now = 301.0
        states = _by_host(cache.host_states(_reply({'node4': 2 * FLAVOR_MB}), token))
        assert states['node4'].free('MEMORY_MB') == NODE_MB - 2 * FLAVOR_MB
        assert cache.assumed() == []


def test_claim_on_one_node_does_not_touch_the_others():
    cache = _cache()
    with cache.reading() as token:
        cache.assume(*_claim(3, 'node4'))
        states = _by_host(cache.host_states(_reply({'node2': 0, 'node4': 0}), token))
    assert states['node2'].free('MEMORY_MB') == NODE_MB


def test_candidates_no_cell_knows_are_reported_not_invented():
    cache = _cache()
    with cache.reading() as token:
        states = cache.host_states(_reply({'node2': 0, 'ghost': 0}), token)
    assert [h.host for h in states.hosts] == ['node2']
    assert states.unknown_providers == ['rp-ghost']


def test_each_host_carries_its_first_allocation_request():
    cache = _cache()
    with cache.reading() as token:
        states = _by_host(cache.host_states(_reply({'node3': 0}), token))
    assert states['node3'].allocation_request == allocation_request(
        'rp-node3', {'MEMORY_MB': FLAVOR_MB})


def test_a_level_is_everywhere_only_while_every_known_host_has_a_domain_there():
    cache = HostStateCache()
    assert not cache.every_host_at('rack')           # no host known yet
    cache.set_records([record('a', failure_domains={'rack': 'r1', 'row': 'w1'}),
                       record('b', failure_domains={'rack': 'r2'})])
    assert cache.every_host_at('rack') and not cache.every_host_at('row')
    assert cache.knows_host('a') and not cache.knows_host('z')
    cache.set_records([record('a', failure_domains={'rack': 'r1'}), record('c')])
    assert not cache.every_host_at('rack')
