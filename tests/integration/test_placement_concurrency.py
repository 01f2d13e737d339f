"""Racing claims against PostgreSQL with real threads: no overcommit, ever.

Each thread drives the real WSGI app (placement.wsgi.make_app, the handlers
and SQL the daemon runs) on its own database connections, so the claims
race inside PostgreSQL exactly as requests served by several workers do.
"""
from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa

from cellplane.db import engines, migrate
from placement.client import InProcessTransport
from placement.objects import allocation as alloc_obj
from placement.objects import consumer as consumer_obj
from placement.wsgi import make_app

CONCURRENT_UPDATE = 'placement.concurrent_update'


@pytest.fixture
def placement(postgres_url_factory):
    engine = engines.create_engine(postgres_url_factory('placement_race'),
                                   pool_size=10, max_overflow=10)
    migrate.sync('placement', engine)
    consumer_obj.forget_cached_names()
    app = make_app(engine, auth_strategy='noauth2')
    yield InProcessTransport(app), engine
    engine.dispose()


def _provider(transport, name: str, inventory: dict) -> str:
    rp = str(uuid.uuid4())
    assert transport.request('POST', '/resource_providers',
                             {'name': name, 'uuid': rp}).status == 200
    resp = transport.request('PUT', f'/resource_providers/{rp}/inventories', {
        'resource_provider_generation': 0,
        'inventories': {rc: {'total': total} for rc, total in inventory.items()}})
    assert resp.status == 200, resp.body
    return rp


def _claim(transport, consumer: str, allocations: dict, generation=None):
    return transport.request('PUT', f'/allocations/{consumer}', {
        'allocations': {rp: {'resources': res} for rp, res in allocations.items()},
        'project_id': 'race', 'user_id': 'race',
        'consumer_generation': generation, 'consumer_type': 'INSTANCE'})


def _race(transport, threads: int, claims) -> list:
    """Run ``claims`` (callables) on ``threads`` threads released together."""
    barrier = threading.Barrier(threads)
    per_thread = [claims[i::threads] for i in range(threads)]

    def worker(mine):
        barrier.wait()
        return [claim() for claim in mine]

    with ThreadPoolExecutor(threads) as pool:
        return [r for rs in pool.map(worker, per_thread) for r in rs]


def _error(resp):
    err = resp.body['errors'][0]
    return err['code'], err['detail']


def test_racing_claims_fill_capacity_exactly_and_never_more(placement):
    transport, engine = placement
    capacity = 20
    rp = _provider(transport, 'race-host', {'VCPU': capacity})
    consumers = [str(uuid.uuid4()) for _ in range(8 * 12)]
    results = _race(transport, 8, [
        (lambda c=c: _claim(transport, c, {rp: {'VCPU': 1}})) for c in consumers])

    won = [r for r in results if r.status == 204]
    lost = [r for r in results if r.status != 204]
    assert len(won) == capacity
    assert all(r.status == 409 for r in lost)
    for r in lost:
        code, detail = _error(r)
        # Lost a race for a unit another claim took while this one waited
        # (concurrent_update), or arrived when the host was already full.
        assert code == CONCURRENT_UPDATE or 'exceed the capacity' in detail, detail
    usages = transport.request('GET', f'/resource_providers/{rp}/usages').body['usages']
    assert usages['VCPU'] == capacity
    with engine.connect() as conn:
        rows = conn.execute(sa.text('SELECT COUNT(*), SUM(used) FROM allocations')).one()
    assert tuple(rows) == (capacity, capacity)


def test_racing_multi_provider_claims_respect_both_providers(placement):
    transport, _ = placement
    a = _provider(transport, 'race-a', {'VCPU': 10})
    b = _provider(transport, 'race-b', {'MEMORY_MB': 6})
    consumers = [str(uuid.uuid4()) for _ in range(40)]
    results = _race(transport, 8, [
        (lambda c=c: _claim(transport, c, {a: {'VCPU': 1}, b: {'MEMORY_MB': 1}}))
        for c in consumers])
    assert sum(1 for r in results if r.status == 204) == 6
    assert all(r.status in (204, 409) for r in results)
    usage_a = transport.request('GET', f'/resource_providers/{a}/usages').body['usages']
    usage_b = transport.request('GET', f'/resource_providers/{b}/usages').body['usages']
    assert (usage_a['VCPU'], usage_b['MEMORY_MB']) == (6, 6)


def test_racing_writers_of_one_consumer_exactly_one_wins(placement):
    transport, _ = placement
    rp = _provider(transport, 'race-consumer', {'VCPU': 100})
    consumer = str(uuid.uuid4())
    assert _claim(transport, consumer, {rp: {'VCPU': 1}}).status == 204
    results = _race(transport, 8, [
        (lambda n=n: _claim(transport, consumer, {rp: {'VCPU': 2 + n}}, generation=1))
        for n in range(8)])
    assert sum(1 for r in results if r.status == 204) == 1
    for r in results:
        if r.status != 204:
            assert r.status == 409
            assert _error(r)[0] == CONCURRENT_UPDATE
    body = transport.request('GET', f'/allocations/{consumer}').body
    assert body['consumer_generation'] == 2


def _wait_until_blocked_on_lock(engine, timeout: float = 30.0) -> None:
    """Return once some session of this database waits for a row lock."""
    deadline = time.monotonic() + timeout
    with engine.connect() as conn:
        while time.monotonic() < deadline:
            waiting = conn.execute(sa.text(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = "
                "current_database() AND wait_event_type = 'Lock'")).scalar()
            if waiting:
                return
            conn.rollback()
            time.sleep(0.01)
    raise AssertionError('the second claim never waited for the provider lock')


def test_loser_of_a_race_for_the_last_unit_gets_concurrent_update(placement):
    """Two writers, one unit left: the one that waited gets concurrent_update."""
    transport, engine = placement
    rp = _provider(transport, 'last-unit', {'VCPU': 1})
    first = alloc_obj.ConsumerWrite(str(uuid.uuid4()), 'race', 'race',
                                    {rp: {'VCPU': 1}}, None, 'INSTANCE')
    resolved = alloc_obj.resolve_names(engine, [first])
    with ThreadPoolExecutor(1) as pool:
        with engine.begin() as conn:
            # The first writer's claim, caught before it commits.
            alloc_obj.replace_in_transaction(conn, [first], resolved)
            second = pool.submit(_claim, transport, str(uuid.uuid4()), {rp: {'VCPU': 1}})
            _wait_until_blocked_on_lock(engine)
        result = second.result()
    assert result.status == 409
    code, detail = _error(result)
    assert code == CONCURRENT_UPDATE
    assert 'exceed the capacity' in detail
    usages = transport.request('GET', f'/resource_providers/{rp}/usages').body['usages']
    assert usages['VCPU'] == 1
