"""The scheduler follows the cell mappings: new cells after a reload, disabled and removed ones out."""
from __future__ import annotations

import datetime

import pytest
import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases, UnknownCell
from cellplane.db import engines, migrate
from cellplane.db.api.models import cell_mappings as cell_mappings_table
from cellplane.db.cell.models import compute_nodes, services
from cellplane.objects import cell_mappings, change_stamps, failure_domains, host_mappings
from scheduler.host_cache import HostStateCache
from scheduler.host_refresher import HostRefresher


def _migrated(url, history):
    engine = engines.create_engine(url)
    migrate.sync(history, engine)
    return engine


def _cell(tmp_path, api_engine, name, hosts):
    url = f'sqlite:///{tmp_path}/{name}.sqlite'
    engine = _migrated(url, 'cell')
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    with engine.begin() as conn:
        for host in hosts:
            conn.execute(compute_nodes.insert().values(
                uuid=f'node-{host}', host=host, nodename=host, vcpus=4, memory_mb=1024,
                local_gb=10, stats={}))
            conn.execute(services.insert().values(
                host=host, binary='cellplane-compute', last_seen_at=now))
    engine.dispose()
    return cell_mappings.create(api_engine, name=name, transport_url=f'memory://{name}',
                           database_connection=url)


def _hosts(cache):
    return sorted((r.host, r.service_up) for r in cache.records())


def test_reload_picks_up_new_cells_and_drops_disabled_and_removed_ones(tmp_path):
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    _cell(tmp_path, api, 'cell1', ['a1', 'a2'])
    cells = CellDatabases(api)
    cache = HostStateCache()
    refresher = HostRefresher(cache, cells, service_down_time=60, interval=3600)
    try:
        refresher.reload_cells()
        assert _hosts(cache) == [('a1', True), ('a2', True)]

        cell2 = _cell(tmp_path, api, 'cell2', ['b1'])
        refresher.refresh()  # a refresh alone does not re-read the mappings
        assert _hosts(cache) == [('a1', True), ('a2', True)]
        refresher.reload_cells()
        assert _hosts(cache) == [('a1', True), ('a2', True), ('b1', True)]

        with api.begin() as conn:
            conn.execute(cell_mappings_table.update().where(
                cell_mappings_table.c.name == 'cell1').values(disabled=True))
        refresher.reload_cells()
        assert _hosts(cache) == [('b1', True)]

        # The refresh mapped the hosts it found: the cell is not empty.
        assert sorted(host for host, _ in host_mappings.list_all(api)) == ['a1', 'a2', 'b1']
        with pytest.raises(cell_mappings.CellMappingError, match='1 host'):
            cell_mappings.delete(api, cell2.uuid)
        cell_mappings.delete(api, cell2.uuid, force=True)
        refresher.reload_cells()
        assert _hosts(cache) == []
    finally:
        cells.dispose()
        api.dispose()


def test_an_unknown_cell_is_looked_up_once_more_before_it_is_refused(tmp_path):
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    cells = CellDatabases(api)
    try:
        cells.reload()
        added = _cell(tmp_path, api, 'late', ['l1'])
        # Mapped after the last reload: found without waiting for a SIGHUP.
        assert cells.mapping(added.uuid).name == 'late'
        with cells.engine(added.uuid).connect() as conn:
            assert conn.execute(sa.select(compute_nodes.c.host)).scalars().all() == ['l1']
        with pytest.raises(UnknownCell, match='cellplane-manage cell list'):
            cells.mapping('no-such-cell')
    finally:
        cells.dispose()
        api.dispose()


def _disabled(cache) -> dict[str, bool]:
    return {r.host: r.service_disabled for r in cache.records()}


def test_between_full_reads_a_refresh_reads_changes_and_a_stamp_or_the_interval_reads_all(
        tmp_path):
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    cell = _cell(tmp_path, api, 'cell1', ['a1', 'a2'])
    engine = engines.create_engine(cell.database_connection)
    hour_ago = datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None) - datetime.timedelta(hours=1)
    with engine.begin() as conn:     # a1 written long before the newest change (a2's)
        conn.execute(compute_nodes.update().values(updated_at=hour_ago))
        conn.execute(services.update().values(created_at=hour_ago))
        conn.execute(compute_nodes.update().where(compute_nodes.c.host == 'a2').values(
            updated_at=hour_ago + datetime.timedelta(minutes=10)))
    cells = CellDatabases(api)
    cache = HostStateCache()
    now = [0.0]
    refresher = HostRefresher(cache, cells, service_down_time=60, interval=3600,
                              full_interval=300, clock=lambda: now[0])

    def disable(value: bool) -> None:
        # As a direct write to the database would: no change stamp, no updated_at.
        with engine.begin() as conn:
            conn.execute(services.update().where(services.c.host == 'a1').values(
                disabled=value))
    try:
        refresher.reload_cells()
        assert _disabled(cache) == {'a1': False, 'a2': False}
        disable(True)
        refresher.refresh()                  # changes only: the flag is not one
        assert _disabled(cache) == {'a1': False, 'a2': False}
        change_stamps.bump_now(api)          # what the CLI and API do after it
        refresher.refresh()
        assert _disabled(cache) == {'a1': True, 'a2': False}

        disable(False)
        now[0] += 299
        refresher.refresh()
        assert _disabled(cache) == {'a1': True, 'a2': False}
        now[0] += 2                          # a full read is due
        refresher.refresh()
        assert _disabled(cache) == {'a1': False, 'a2': False}
    finally:
        engine.dispose()
        cells.dispose()
        api.dispose()


def test_failure_domains_are_read_at_full_refreshes_and_hung_on_the_nodes_a_change_brings(
        tmp_path):
    api = _migrated(f'sqlite:///{tmp_path}/api.sqlite', 'api')
    cell = _cell(tmp_path, api, 'cell1', ['a1', 'a2'])
    engine = engines.create_engine(cell.database_connection)
    cells = CellDatabases(api)
    cache = HostStateCache()
    refresher = HostRefresher(cache, cells, service_down_time=60, interval=3600,
                              full_interval=300, clock=lambda: 0.0)
    statements: list[str] = []
    sa.event.listen(api, 'before_cursor_execute',
                    lambda conn, cursor, statement, *rest: statements.append(statement))
    try:
        refresher.reload_cells()             # maps a1 and a2
        failure_domains.record_levels(api, ['rack'])
        with api.begin() as conn:            # a3 mapped before its node reports
            host_mappings.map_hosts(conn, cell_mappings.id_of(conn, cell.uuid), ['a3'])
        rack = failure_domains.create(api, 'rack', 'r1', hosts=['a1', 'a3']).domain
        refresher.refresh()                  # the stamp moved: a full read
        assert _racks(cache) == {'a1': rack.uuid, 'a2': None}

        statements.clear()
        refresher.refresh()                  # nothing changed: neither map is read
        assert not [s for s in statements if 'failure_domain_hosts' in s
                    or 'aggregate_hosts' in s]
        assert _racks(cache) == {'a1': rack.uuid, 'a2': None}

        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        with engine.begin() as conn:
            conn.execute(compute_nodes.insert().values(
                uuid='node-a3', host='a3', nodename='a3', vcpus=4, memory_mb=1024,
                local_gb=10, stats={}, updated_at=now))
            conn.execute(services.insert().values(
                host='a3', binary='cellplane-compute', last_seen_at=now, created_at=now))
        statements.clear()
        refresher.refresh()                  # a read of changes brings a3, in its rack
        assert not [s for s in statements if 'failure_domain_hosts' in s]
        assert _racks(cache) == {'a1': rack.uuid, 'a2': None, 'a3': rack.uuid}
        assert cache.failure_domain_of_host('a3', 'rack') == rack.uuid
    finally:
        engine.dispose()
        cells.dispose()
        api.dispose()


def _racks(cache) -> dict[str, str | None]:
    return {r.host: r.failure_domains.get('rack') for r in cache.records()}
