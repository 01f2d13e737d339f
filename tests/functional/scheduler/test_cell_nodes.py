"""Compute node records read from a real (SQLite, or PostgreSQL behind a proxy) cell database, with service liveness."""
from __future__ import annotations

import datetime
import threading

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from cellplane.db import engines, migrate
from cellplane.db.cell.models import compute_nodes, services
from cellplane.objects.compute_nodes import COMPUTE_BINARY
from scheduler.cell_nodes import read_cell, read_cell_changes, refresh_cache
from scheduler.host_cache import HostStateCache
from tests.support.tcp_proxy import TcpProxy

NOW = datetime.datetime(2026, 11, 22, 9, 0, 0)


@pytest.fixture
def cell_engine(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path / "cell.db"}')
    migrate.sync('cell', engine)
    yield engine
    engine.dispose()


def _node(conn, name, **extra):
    values = {'uuid': f'uuid-{name}', 'host': name, 'nodename': name, 'vcpus': 8,
              'memory_mb': 1024, 'local_gb': 10, 'stats': {}}
    values.update(extra)
    conn.execute(sa.insert(compute_nodes).values(**values))


def _service(conn, host, seconds_ago, **extra):
    conn.execute(sa.insert(services).values(
        host=host, binary=COMPUTE_BINARY, topic='compute',
        last_seen_at=NOW - datetime.timedelta(seconds=seconds_ago), **extra))


def test_nodes_carry_identity_zone_stats_and_liveness(cell_engine):
    with cell_engine.begin() as conn:
        _node(conn, 'up', availability_zone='az1', stats={'failed_builds': 2})
        _node(conn, 'stale')
        _node(conn, 'off')
        _node(conn, 'never')
        _service(conn, 'up', 5)
        _service(conn, 'stale', 120)
        _service(conn, 'off', 5, disabled=True, disabled_reason='maintenance')
    records = {r.host: r for r in read_cell(cell_engine, 'cell-1',
                                            service_down_time=60, now=NOW)}
    up = records['up']
    assert (up.uuid, up.cell_uuid, up.availability_zone) == ('uuid-up', 'cell-1', 'az1')
    assert up.stats == {'failed_builds': 2}
    assert up.service_up and not up.service_disabled
    assert not records['stale'].service_up
    assert records['off'].service_disabled
    assert records['off'].disabled_reason == 'maintenance'
    assert not records['never'].service_up


def test_a_conductor_service_on_the_same_host_is_not_taken_for_the_compute(cell_engine):
    with cell_engine.begin() as conn:
        _node(conn, 'h1')
        conn.execute(sa.insert(services).values(
            host='h1', binary='cellplane-conductor', last_seen_at=NOW))
    (record,) = read_cell(cell_engine, 'cell-1', service_down_time=60, now=NOW)
    assert not record.service_up


def test_an_unreadable_cell_keeps_its_records_marked_unreadable_until_read_again(
        cell_engine, tmp_path):
    other = engines.create_engine(f'sqlite:///{tmp_path / "cell2.db"}')
    migrate.sync('cell', other)
    with cell_engine.begin() as conn:
        _node(conn, 'h1')
    with other.begin() as conn:
        _node(conn, 'h2')
    cache = HostStateCache()
    cells = {'cell-1': cell_engine, 'cell-2': other}
    assert refresh_cache(cache, cells, service_down_time=60, now=NOW) == {}
    with other.begin() as conn:
        conn.execute(sa.text('ALTER TABLE compute_nodes RENAME TO away'))
    failed = refresh_cache(cache, cells, service_down_time=60, now=NOW)
    assert list(failed) == ['cell-2']
    records = {r.host: r for r in cache.records()}
    assert sorted((r.host, r.cell_uuid) for r in records.values()) == [
        ('h1', 'cell-1'), ('h2', 'cell-2')]
    assert records['h1'].cell_unreadable is None
    assert 'no such table' in records['h2'].cell_unreadable
    with other.begin() as conn:
        conn.execute(sa.text('ALTER TABLE away RENAME TO compute_nodes'))
    assert refresh_cache(cache, cells, service_down_time=60, now=NOW) == {}
    assert [r.cell_unreadable for r in cache.records()] == [None, None]
    other.dispose()


@pytest.fixture
def proxied_cell(postgres_url):
    """(proxy, engine): a PostgreSQL cell database with node h9, reached through ``proxy``."""
    real = make_url(postgres_url)
    proxy = TcpProxy(real.host or '127.0.0.1', real.port or 5432).start()
    engine = engines.create_engine(
        real.set(host='127.0.0.1', port=proxy.port).render_as_string(hide_password=False),
        connect_timeout=2)
    migrate.sync('cell', engine)
    with engine.begin() as conn:
        _node(conn, 'h9')
    try:
        yield proxy, engine
    finally:
        engine.dispose()
        proxy.stop()


def test_a_cell_database_away_for_a_moment_is_read_again_not_marked_unreadable(
        proxied_cell):
    proxy, engine = proxied_cell
    cache = HostStateCache()
    assert refresh_cache(cache, {'cell-9': engine}, service_down_time=60, now=NOW) == {}
    proxy.stop()   # the pool's connection dropped, new ones refused: a restart
    back = threading.Timer(1.0, proxy.start)
    back.start()
    try:
        failed = refresh_cache(cache, {'cell-9': engine}, service_down_time=60, now=NOW,
                               read_retry_seconds=30)
    finally:
        back.join()
    assert failed == {}
    assert [(r.host, r.cell_unreadable) for r in cache.records()] == [('h9', None)]


def test_a_cell_database_that_stays_away_is_marked_unreadable(proxied_cell):
    proxy, engine = proxied_cell
    cache = HostStateCache()
    refresh_cache(cache, {'cell-9': engine}, service_down_time=60, now=NOW)
    proxy.stop()
    failed = refresh_cache(cache, {'cell-9': engine}, service_down_time=60, now=NOW,
                           read_retry_seconds=0.5)
    proxy.start()
    assert list(failed) == ['cell-9']
    (record,) = cache.records()
    assert record.cell_unreadable   # the driver's reason, e.g. "Connection refused"


def test_a_read_of_changes_reads_the_rows_written_since_and_the_services_down(cell_engine):
    old = NOW - datetime.timedelta(hours=1)
    recent = NOW - datetime.timedelta(minutes=5)
    with cell_engine.begin() as conn:
        for host in ('a', 'b', 'c', 'd'):
            _node(conn, host, updated_at=old)
            _service(conn, host, 5, created_at=old)
        _node(conn, 'z', updated_at=recent)
        _service(conn, 'z', 5, created_at=old)
    first = read_cell_changes(cell_engine, 'cell-1', None, service_down_time=60,
                              now=NOW - datetime.timedelta(seconds=10))
    assert sorted((r.host, r.service_up) for r in first.records.values()) == [
        ('a', True), ('b', True), ('c', True), ('d', True), ('z', True)]
    assert first.read_at == NOW - datetime.timedelta(seconds=10)

    # Nothing written since the first read (less CHANGE_MARGIN): no row is
    # read again, z's of five minutes ago included.
    again = read_cell_changes(cell_engine, 'cell-1', first, service_down_time=60, now=NOW)
    assert all(r is first.records[u] for u, r in again.records.items())
    assert again.read_at == NOW

    # A row stamped a little before the last read began, committed after it: read.
    with cell_engine.begin() as conn:
        conn.execute(sa.update(compute_nodes).where(compute_nodes.c.host == 'z').values(
            stats={'late': 1}, updated_at=NOW - datetime.timedelta(seconds=20)))
    again = read_cell_changes(cell_engine, 'cell-1', again, service_down_time=60, now=NOW)
    assert [r.host for u, r in again.records.items() if r is not first.records[u]] == ['z']

    with cell_engine.begin() as conn:
        conn.execute(sa.update(compute_nodes).where(compute_nodes.c.host == 'a').values(
            availability_zone='az2', updated_at=NOW))
        conn.execute(sa.update(services).where(services.c.host == 'b').values(
            last_seen_at=NOW - datetime.timedelta(seconds=120)))
        _node(conn, 'e', updated_at=NOW)
    changed = read_cell_changes(cell_engine, 'cell-1', again, service_down_time=60, now=NOW)
    records = {r.host: r for r in changed.records.values()}
    assert records['a'].availability_zone == 'az2'
    assert not records['b'].service_up
    assert not records['e'].service_up         # no service row yet
    assert records['c'] is again.records['uuid-c']

    with cell_engine.begin() as conn:
        conn.execute(sa.update(services).where(services.c.host == 'b').values(
            last_seen_at=NOW))
        _service(conn, 'e', 1, created_at=NOW)
    back = read_cell_changes(cell_engine, 'cell-1', changed, service_down_time=60, now=NOW)
    assert {r.host: r.service_up for r in back.records.values()} == {
        'a': True, 'b': True, 'c': True, 'd': True, 'e': True, 'z': True}


def test_a_node_deleted_since_the_last_read_makes_it_a_full_read(cell_engine):
    old = NOW - datetime.timedelta(hours=1)
    with cell_engine.begin() as conn:
        for host in ('a', 'b'):
            _node(conn, host, updated_at=old)
            _service(conn, host, 5, created_at=old)
    first = read_cell_changes(cell_engine, 'cell-1', None, service_down_time=60, now=NOW)
    with cell_engine.begin() as conn:
        conn.execute(sa.delete(compute_nodes).where(compute_nodes.c.host == 'a'))
        _node(conn, 'c', updated_at=NOW)     # the count alone would not tell
    read = read_cell_changes(cell_engine, 'cell-1', first, service_down_time=60, now=NOW)
    assert sorted(r.host for r in read.records.values()) == ['b', 'c']


def test_a_refresh_of_changes_keeps_what_was_hung_on_the_records(cell_engine):
    old = NOW - datetime.timedelta(hours=1)
    with cell_engine.begin() as conn:
        for host in ('a', 'b'):
            _node(conn, host, updated_at=old)
            _service(conn, host, 5, created_at=old)
    cache, reads = HostStateCache(), {}
    domains = {'a': {'rack': 'r1'}, 'b': {'rack': 'r2'}}
    refresh_cache(cache, {'cell-1': cell_engine}, service_down_time=60, now=NOW,
                  host_domains=domains, reads=reads)
    with cell_engine.begin() as conn:
        conn.execute(sa.update(compute_nodes).where(compute_nodes.c.host == 'a').values(
            stats={'failed_builds': 1}, updated_at=NOW - datetime.timedelta(seconds=1)))
    refresh_cache(cache, {'cell-1': cell_engine}, service_down_time=60, now=NOW,
                  host_domains=domains, reads=reads, full=False)
    records = {r.host: r for r in cache.records()}
    assert records['a'].stats == {'failed_builds': 1}
    assert {h: dict(r.failure_domains) for h, r in records.items()} == domains
    assert reads['cell-1'].records['uuid-b'] is records['b']

    # The read itself keeps them on a row it reads again (refresh_cache
    # hangs the domains anew, so the cache alone would not show a loss).
    with cell_engine.begin() as conn:
        conn.execute(sa.update(compute_nodes).where(compute_nodes.c.host == 'a').values(
            stats={'failed_builds': 2}, updated_at=NOW))
    again = read_cell_changes(cell_engine, 'cell-1', reads['cell-1'], service_down_time=60,
                              now=NOW)
    assert again.records['uuid-a'].stats == {'failed_builds': 2}
    assert dict(again.records['uuid-a'].failure_domains) == domains['a']


def test_a_read_of_changes_reads_whole_only_the_rows_of_its_margin_it_has_not_read(cell_engine):
    # Every host reported a moment ago (a deployment just started): all its
    # rows are within CHANGE_MARGIN of every read for the next 30 s.
    with cell_engine.begin() as conn:
        for i, host in enumerate('abcd'):
            _node(conn, host, updated_at=NOW - datetime.timedelta(seconds=5 + i))
            _service(conn, host, 5, created_at=NOW - datetime.timedelta(hours=1))
    first = read_cell_changes(cell_engine, 'cell-1', None, service_down_time=60, now=NOW)
    assert first.stamps == {f'uuid-{h}': NOW - datetime.timedelta(seconds=5 + i)
                            for i, h in enumerate('abcd')}
    later = NOW + datetime.timedelta(seconds=2)
    again = read_cell_changes(cell_engine, 'cell-1', first, service_down_time=60, now=later)
    # Read again: none of them (the same stamps), yet the records all there.
    assert all(r is first.records[u] for u, r in again.records.items())
    assert len(again.records) == 4
    # One row written anew within the margin: that one alone.
    with cell_engine.begin() as conn:
        conn.execute(sa.update(compute_nodes).where(compute_nodes.c.host == 'c').values(
            stats={'failed_builds': 3}, updated_at=NOW - datetime.timedelta(seconds=1)))
    third = read_cell_changes(cell_engine, 'cell-1', again, service_down_time=60, now=later)
    assert [r.host for u, r in third.records.items() if r is not again.records[u]] == ['c']
    assert third.records['uuid-c'].stats == {'failed_builds': 3}
    assert third.stamps['uuid-c'] == NOW - datetime.timedelta(seconds=1)
    # A service gone silent is read again even though its node row is known.
    with cell_engine.begin() as conn:
        conn.execute(sa.update(services).where(services.c.host == 'b').values(
            last_seen_at=NOW - datetime.timedelta(seconds=120)))
    fourth = read_cell_changes(cell_engine, 'cell-1', third, service_down_time=60, now=later)
    assert not fourth.records['uuid-b'].service_up


def test_a_read_of_changes_names_the_records_it_made_anew_and_not_a_node_still_down(
        cell_engine):
    old = NOW - datetime.timedelta(hours=1)
    with cell_engine.begin() as conn:
        _node(conn, 'up', updated_at=old)
        _node(conn, 'down', updated_at=old)
        _service(conn, 'up', 5, created_at=old)
        _service(conn, 'down', 120, created_at=old)
    first = read_cell_changes(cell_engine, 'cell-1', None, service_down_time=60, now=NOW)
    assert first.changed is None                       # a read in full
    again = read_cell_changes(cell_engine, 'cell-1', first, service_down_time=60, now=NOW)
    # The down node's row is read again each time, but nothing in it changed.
    assert again.changed == frozenset()
    assert again.records['uuid-down'] is first.records['uuid-down']

    with cell_engine.begin() as conn:
        conn.execute(sa.update(services).where(services.c.host == 'down').values(
            last_seen_at=NOW))
    back = read_cell_changes(cell_engine, 'cell-1', again, service_down_time=60, now=NOW)
    assert back.changed == frozenset({'uuid-down'})
    assert back.records['uuid-down'].service_up


def test_a_refresh_with_nothing_changed_leaves_the_cache_as_it_was(cell_engine):
    old = NOW - datetime.timedelta(hours=1)
    with cell_engine.begin() as conn:
        _node(conn, 'a', updated_at=old)
        _service(conn, 'a', 5, created_at=old)
    cache, reads = HostStateCache(), {}
    refresh_cache(cache, {'cell-1': cell_engine}, service_down_time=60, now=NOW,
                  host_domains={'a': {'rack': 'r1'}}, reads=reads)
    (before,) = cache.records()
    # Maps passed between full reads are those passed last (an operator change
    # is a full read): a record not read anew keeps what was hung on it.
    refresh_cache(cache, {'cell-1': cell_engine}, service_down_time=60, now=NOW,
                  host_domains={'a': {'rack': 'r2'}}, reads=reads, full=False)
    (after,) = cache.records()
    assert after is before and dict(after.failure_domains) == {'rack': 'r1'}
    refresh_cache(cache, {'cell-1': cell_engine}, service_down_time=60, now=NOW,
                  host_domains={'a': {'rack': 'r2'}}, reads=reads)
    assert dict(cache.records()[0].failure_domains) == {'rack': 'r2'}


def test_a_refresh_that_raises_half_way_leaves_the_next_one_to_catch_up(cell_engine, tmp_path):
    other = engines.create_engine(f'sqlite:///{tmp_path / "cell2.db"}')
    migrate.sync('cell', other)
    old = NOW - datetime.timedelta(hours=1)
    for engine, host in ((cell_engine, 'a1'), (other, 'b1')):
        with engine.begin() as conn:
            _node(conn, host, updated_at=old)
            _service(conn, host, 5, created_at=old)
    cells = {'cell-1': cell_engine, 'cell-2': other}
    domains = {'a1': {'rack': 'r1'}, 'a2': {'rack': 'r1'}, 'b1': {'rack': 'r2'}}
    cache, reads = HostStateCache(), {}
    refresh_cache(cache, cells, service_down_time=60, now=NOW, host_domains=domains,
                  reads=reads)
    with cell_engine.begin() as conn:
        _node(conn, 'a2', updated_at=NOW)
        _service(conn, 'a2', 5, created_at=NOW)
    # cell-2's row cannot be decoded: not a database error, so the refresh
    # raises after cell-1's read (as any bug there would).
    with other.begin() as conn:
        conn.execute(sa.text("UPDATE compute_nodes SET stats = 'not json', updated_at = :now"),
                     {'now': NOW})
    with pytest.raises(ValueError):
        refresh_cache(cache, cells, service_down_time=60, now=NOW, host_domains=domains,
                      reads=reads, full=False)
    with other.begin() as conn:
        conn.execute(sa.text("UPDATE compute_nodes SET stats = '{}'"))
    refresh_cache(cache, cells, service_down_time=60, now=NOW, host_domains=domains,
                  reads=reads, full=False)
    assert {r.host: dict(r.failure_domains) for r in cache.records()} == {
        'a1': {'rack': 'r1'}, 'a2': {'rack': 'r1'}, 'b1': {'rack': 'r2'}}
    other.dispose()
