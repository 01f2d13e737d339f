"""Failure domains in a migrated API database (SQLite; PostgreSQL for a race): levels, containment, one per level."""
from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from cellplane.db import engines, migrate
from cellplane.objects import cell_mappings, failure_domain_levels, failure_domains, host_mappings

HOSTS = ('h1', 'h2', 'h3', 'h4')


@pytest.fixture
def api(tmp_path):
    engine = engines.create_engine(f'sqlite:///{tmp_path}/api.sqlite')
    migrate.sync('api', engine)
    cell = cell_mappings.create(engine, name='cell1', transport_url='memory://cell1',
                                database_connection='sqlite://')
    with engine.begin() as conn:
        host_mappings.map_hosts(conn, cell_mappings.id_of(conn, cell.uuid), HOSTS)
    failure_domains.record_levels(engine, ['rack', 'row', 'room'])
    yield engine
    engine.dispose()


def test_a_row_of_racks_has_their_hosts_and_follows_them(api):
    failure_domains.create(api, 'rack', 'r1', hosts=['h1'])
    failure_domains.create(api, 'rack', 'r2', hosts=['h2'])
    made = failure_domains.create(api, 'row', 'A', contains=['rack:r1', 'rack:r2'])
    assert made.domain.hosts == ('h1', 'h2') and made.domain.own_hosts == ()
    assert made.hosts_changed == ('h1', 'h2')

    grown = failure_domains.add_hosts(api, 'rack:r1', ['h3'])
    assert grown.hosts_changed == ('h3',)
    row = failure_domains.get(api, 'row:A')
    assert row.hosts == ('h1', 'h2', 'h3')
    assert row.contains == ('rack:r1', 'rack:r2')
    assert failure_domains.get(api, 'rack:r1').contained_in == ('row:A',)
    assert failure_domains.host_domains(api)['h3'] == {'rack': grown.domain.uuid,
                                                       'row': row.uuid}

    shrunk = failure_domains.remove_hosts(api, 'rack:r2', ['h2'])
    assert shrunk.hosts_changed == ('h2',)
    assert failure_domains.get(api, 'row:A').hosts == ('h1', 'h3')
    assert 'h2' not in failure_domains.host_domains(api)


def test_a_host_in_a_rack_through_a_row_conflicts_with_another_row(api):
    failure_domains.create(api, 'rack', 'r1', hosts=['h1'])
    failure_domains.create(api, 'row', 'A', contains=['rack:r1'])
    failure_domains.create(api, 'row', 'B', hosts=['h2'])
    with pytest.raises(failure_domains.HostConflict) as refused:
        failure_domains.add_hosts(api, 'row:B', ['h1'])
    assert str(refused.value) == ('host h1 would be in row:A (through rack:r1) and in '
                                  'row:B; a host is in at most one row')
    assert failure_domains.get(api, 'row:B').hosts == ('h2',)


def test_levels_in_use_cannot_be_dropped_or_reordered(api):
    failure_domains.create(api, 'rack', 'r1')
    failure_domains.create(api, 'row', 'A', contains=['rack:r1'])
    with pytest.raises(failure_domains.LevelsInUse, match='row have domains'):
        failure_domains.record_levels(api, ['rack'])
    with pytest.raises(failure_domains.LevelsInUse, match='does not put rack below row'):
        failure_domains.record_levels(api, ['row', 'rack'])
    assert failure_domain_levels.levels(api) == ['rack', 'row', 'room']
    assert failure_domains.record_levels(api, ['rack', 'row', 'room']) is False
    assert failure_domains.record_levels(api, ['rack', 'row']) is True


def test_delete_leaves_the_contained_domains(api):
    failure_domains.create(api, 'rack', 'r1', hosts=['h1'])
    failure_domains.create(api, 'row', 'A', contains=['rack:r1'])
    with pytest.raises(failure_domains.DomainInUse, match='part of row:A') as refused:
        failure_domains.delete(api, 'rack:r1')
    assert (refused.value.label, refused.value.containers) == ('rack:r1', ('row:A',))
    gone = failure_domains.delete(api, 'row:A')
    assert gone.hosts_changed == ('h1',)
    assert [d.label for d in failure_domains.list_all(api)] == ['rack:r1']
    assert failure_domains.host_domains(api) == {
        'h1': {'rack': failure_domains.get(api, 'rack:r1').uuid}}


def test_two_schedulers_recording_the_first_levels_at_once_both_start(postgres_url):
    # FOR UPDATE locks no row of an empty levels table: both writers read
    # nothing and insert; the later one meets the unique names and must read
    # again instead of failing its scheduler's start.
    engine = engines.create_engine(postgres_url)
    try:
        migrate.sync('api', engine)
        first = engine.connect()
        transaction = first.begin()
        assert failure_domain_levels.read(first, lock=True) == []
        failure_domain_levels.replace(first, ['rack', 'row'])
        outcome = {}

        def second():
            try:
                outcome['changed'] = failure_domains.record_levels(engine, ['rack', 'row'])
            except Exception as exc:  # noqa: BLE001 - the assertion below shows it
                outcome['error'] = exc
        racer = threading.Thread(target=second)
        racer.start()
        # The second writer waits on the first's uncommitted names.
        deadline = 50
        while deadline and not _waiting_on_a_lock(engine):
            deadline -= 1
            racer.join(0.1)
        transaction.commit()
        first.close()
        racer.join(30)
        assert outcome == {'changed': False}
        assert failure_domain_levels.levels(engine) == ['rack', 'row']
    finally:
        engine.dispose()


def _waiting_on_a_lock(engine) -> bool:
    with engine.connect() as conn:
        return bool(conn.execute(sa.text(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND datname = current_database()")).scalar())
