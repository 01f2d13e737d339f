"""``GET /os-migrations`` and ``/servers/{id}/migrations``: listed, shown, aborted and forced as Nova answers.

Over the embedded control plane (two cells of two hosts): the migrations
are real moves, their documents checked against tempest's schemas at the
microversions where they change. A live migration is held in its copy by
the source's fake driver (``move_seconds``, set on that host for the test)
until it is aborted or forced to complete.
"""
from __future__ import annotations

import contextlib
import copy
import json
import socket
import uuid as uuidlib
from urllib.parse import parse_qs, urlparse

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import migrations as v2_1
from tempest.lib.api_schema.response.compute.v2_1 import servers as servers_v2_1
from tempest.lib.api_schema.response.compute.v2_23 import migrations as v2_23
from tempest.lib.api_schema.response.compute.v2_59 import migrations as v2_59
from tempest.lib.api_schema.response.compute.v2_59 import servers as servers_v2_59

from cellplane.context import new_context
from cellplane.objects import cell_mappings, flavors, instances, migrations
from cellplane_api import moves
from rpc_schemas.flavor import Flavor
from tests.functional.compute_api.harness import Answer, ComputeCloud, check

ADMIN = 'admin:admin'
# Long enough that the copy is never over by itself while a test looks at it.
HELD_COPY_SECONDS = 600.0
SMALL = {'VCPU': 1, 'MEMORY_MB': 256, 'DISK_GB': 1}


def _schema_for(version: tuple[int, int]) -> dict:
    if version >= (2, 59):
        return v2_59.list_migrations
    return v2_23.list_migrations if version >= (2, 23) else v2_1.list_migrations


def _server_schemas(version: tuple[int, int]) -> tuple[dict, dict]:
    """tempest's list_live_migrations at ``version``, and a show made of its item (tempest has none)."""
    listed = (servers_v2_59 if version >= (2, 59) else servers_v2_1).list_live_migrations
    item = listed['response_body']['properties']['migrations']['items']
    shown = {'status_code': [200], 'response_body': {
        'type': 'object', 'properties': {'migration': copy.deepcopy(item)},
        'required': ['migration'], 'additionalProperties': False}}
    return listed, shown


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('migrations'), cells=2, hosts_per_cell=2)
    flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=256, root_gb=1,
                   flavorid='small')
    flavors.create(cloud.services.api_engine, name='large', vcpus=2, memory_mb=512,
                   root_gb=1, flavorid='large')
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _boot(api, token) -> dict:
    answer = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'vm', 'flavorRef': 'small', 'imageRef': 'cirros'}}, token=token)
    assert answer.status == 202, answer.text
    return api.wait_for_status(answer.json['server']['id'], 'ACTIVE', token=token)


def _where(api, server_id) -> tuple[str, dict]:
    """(cell name, the server's cell row)."""
    for name, engine in api.cloud.cell_engines.items():
        with engine.connect() as conn:
            row = instances.get_instance(conn, server_id)
        if row is not None:
            return name, row
    raise AssertionError(f'server {server_id} in no cell')


def _migrations_of(api, server_id) -> list[migrations.Migration]:
    cell, _ = _where(api, server_id)
    with api.cloud.cell_engines[cell].connect() as conn:
        return migrations.find(conn, instance_uuid=server_id)


def _held(api, consumer: str) -> dict[str, dict[str, int]]:
    """Host name -> what ``consumer`` holds there."""
    names = {hosted.node_uuid: name for name, hosted in api.cloud.computes.items()}
    return {names[rp]: r for rp, r in
            api.cloud.placement.get_allocations(consumer).allocations.items()}


@contextlib.contextmanager
def _slow_copies(api, host: str):
    """``host``'s fake driver copies for HELD_COPY_SECONDS while the block runs."""
    settings = api.cloud.computes[host].driver.settings
    settings.move_seconds = HELD_COPY_SECONDS
    try:
        yield
    finally:
        settings.move_seconds = 0.0


def _live_migrate(api, server_id, host=None):
    answer = api.request('POST', f'/v2.1/servers/{server_id}/action', {'os-migrateLive': {
        'host': host, 'block_migration': False, 'disk_over_commit': False}}, token=ADMIN)
    assert answer.status == 202, answer.text


def _copying(api, server_id) -> migrations.Migration:
    """The server's live migration, once its source copies it."""
    found = []

    def copying():
        found[:] = [m for m in _migrations_of(api, server_id)
                    if m.status == migrations.MIGRATING]
        return bool(found)
    api.wait_until(copying, f'a live migration of {server_id} copying')
    return found[0]


def _ended(api, migration_uuid: str, server_id: str) -> migrations.Migration:
    found = []

    def over():
        found[:] = [m for m in _migrations_of(api, server_id)
                    if m.uuid == migration_uuid and m.final]
        return bool(found)
    api.wait_until(over, f'migration {migration_uuid} over')
    return found[0]


@pytest.fixture(scope='module')
def moved(api):
    """A confirmed cold migration, and a live migration held in its copy: (cold, live, server ids)."""
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    token = f'{name}-user:{name}'
    cold_server = _boot(api, token)
    assert api.request('POST', f'/v2.1/servers/{cold_server["id"]}/action',
                       {'migrate': None}, token=ADMIN).status == 202
    api.wait_for_status(cold_server['id'], 'VERIFY_RESIZE', token=token)
    assert api.request('POST', f'/v2.1/servers/{cold_server["id"]}/action',
                       {'confirmResize': None}, token=token).status == 204
    api.wait_for_status(cold_server['id'], 'ACTIVE', token=token)
    [cold] = _migrations_of(api, cold_server['id'])
    live_server = _boot(api, token)
    _, row = _where(api, live_server['id'])
    with _slow_copies(api, row['host']):
        _live_migrate(api, live_server['id'])
        live = _copying(api, live_server['id'])
        yield cold, live, token
        # Ended: forced to complete, so the next tests start from a quiet cloud.
        api.request('POST', f'/v2.1/servers/{live_server["id"]}/migrations/{live.id}/action',
                    {'force_complete': None}, token=ADMIN, version='2.22')
        _ended(api, live.uuid, live_server['id'])


def _listed(api, version: str, query: str = '', token: str = ADMIN):
    return api.request('GET', f'/v2.1/os-migrations{query}', token=token, version=version)


@pytest.mark.parametrize('version', ['2.1', '2.22', '2.23', '2.58', '2.59', '2.66', '2.69'])
def test_os_migrations_lists_every_move_with_novas_fields_at_each_version(api, moved, version):
    cold, live, _ = moved
    mv = tuple(int(p) for p in version.split('.'))
    body = check(_schema_for(mv), _listed(api, version))
    by_id = {(m['instance_uuid'], m['id']): m for m in body['migrations']}
    got_cold = by_id[(cold.instance_uuid, cold.id)]
    got_live = by_id[(live.instance_uuid, live.id)]
    assert (got_cold['status'], got_cold['source_compute'], got_cold['dest_compute']) == (
        'confirmed', cold.source_host, cold.dest_host)
    ids = flavors.row_ids(api.services.api_engine, ['small'])
    assert got_cold['old_instance_type_id'] == got_cold['new_instance_type_id'] == ids['small']
    assert got_live['status'] == 'migrating'
    assert ('migration_type' in got_live) == (mv >= (2, 23))
    assert ('uuid' in got_live) == (mv >= (2, 59))
    if mv >= (2, 23):
        assert (got_cold['migration_type'], got_live['migration_type']) == (
            'migration', 'live-migration')
        # Links only to a live migration in progress, its server's migration.
        assert 'links' not in got_cold
        [self_link, bookmark] = got_live['links']
        assert self_link['href'].endswith(
            f'/v2.1/servers/{live.instance_uuid}/migrations/{live.id}')
        assert '/v2.1/' not in bookmark['href']
    if mv >= (2, 59):
        assert got_live['uuid'] == live.uuid
        stamps = [(m['created_at'], m['id']) for m in body['migrations']]
        assert stamps == sorted(stamps, reverse=True)     # newest first


@pytest.mark.parametrize('query, wanted', [
    ('?status=migrating', {'live'}),
    ('?migration_type=migration', {'cold'}),
    ('?migration_type=live-migration&status=confirmed', set()),
    ('?hidden=1', set()),
    ('?hidden=0&status=confirmed', {'cold'}),
    ('?anything=else&status=confirmed', {'cold'}),   # below 2.59 Nova ignores the unknown
])
def test_os_migrations_filters(api, moved, query, wanted):
    cold, live, _ = moved
    body = check(v2_1.list_migrations, _listed(api, '2.1', query))
    named = {cold.uuid: 'cold', live.uuid: 'live'}
    by_key = {(m.instance_uuid, m.id): m.uuid for m in (cold, live)}
    assert {named[by_key[(m['instance_uuid'], m['id'])]] for m in body['migrations']
            if (m['instance_uuid'], m['id']) in by_key} == wanted


def test_os_migrations_filters_by_host_server_and_source(api, moved):
    cold, live, _ = moved
    for query, wanted in ((f'?instance_uuid={live.instance_uuid}', {live.uuid}),
                          (f'?source_compute={cold.source_host}&instance_uuid='
                           f'{cold.instance_uuid}', {cold.uuid}),
                          (f'?host={cold.dest_host}&instance_uuid={cold.instance_uuid}',
                           {cold.uuid}),
                          (f'?source_compute={cold.dest_host}&instance_uuid='
                           f'{cold.instance_uuid}', set())):
        body = check(v2_59.list_migrations, _listed(api, '2.59', query))
        assert {m['uuid'] for m in body['migrations']} == wanted, query


def test_from_2_59_pages_by_limit_and_marker_with_a_next_link(api, moved):
    everything = check(v2_59.list_migrations, _listed(api, '2.59'))['migrations']
    assert len(everything) >= 2
    first = _listed(api, '2.59', '?limit=1')
    assert first.status == 200
    page = first.json
    # tempest's 2.59 schema has no migrations_links, which Nova adds to a full page.
    [link] = page.pop('migrations_links')
    check(v2_59.list_migrations, Answer(200, first.headers, json.dumps(page)))
    assert page['migrations'] == everything[:1] and link['rel'] == 'next'
    query = parse_qs(urlparse(link['href']).query)
    assert query == {'limit': ['1'], 'marker': [everything[0]['uuid']]}
    rest = check(v2_59.list_migrations, _listed(
        api, '2.59', f'?marker={everything[0]["uuid"]}'))['migrations']
    assert rest == everything[1:]


@pytest.mark.parametrize('version, query, said', [
    ('2.59', '?marker=nope', 'Marker nope could not be found.'),
    ('2.59', '?anything=else', "'anything' was unexpected"),
    ('2.59', '?changes-before=2026-01-01T00:00:00Z', "'changes-before' was unexpected"),
    ('2.59', '?limit=-1', 'limit'),
    ('2.59', '?limit=1&limit=2', 'It must be given once'),
    ('2.66', '?changes-since=2026-01-02T00:00:00Z&changes-before=2026-01-01T00:00:00Z',
     'changes-since must be less than or equal to changes-before'),
    ('2.66', '?changes-since=yesterday', 'It is not an ISO 8601 time'),
])
def test_bad_queries_are_novas_400(api, version, query, said):
    answer = _listed(api, version, query)
    assert answer.status == 400 and said in answer.json['badRequest']['message'], answer.text


def test_changes_since_and_before_filter_on_the_last_change(api, moved):
    assert check(v2_59.list_migrations, _listed(
        api, '2.59', '?changes-since=2999-01-01T00:00:00Z'))['migrations'] == []
    assert check(v2_59.list_migrations, _listed(
        api, '2.66', '?changes-before=2000-01-01T00:00:00Z'))['migrations'] == []
    since = check(v2_59.list_migrations, _listed(
        api, '2.66', '?changes-since=2000-01-01T00:00:00Z&changes-before=2999-01-01T00:00:00Z'))
    assert len(since['migrations']) >= 2
    # Below 2.59 Nova drops changes-since from the filters.
    assert check(v2_1.list_migrations, _listed(
        api, '2.1', '?changes-since=2999-01-01T00:00:00Z'))['migrations'] != []


def test_every_cells_migrations_are_listed(api, moved):
    """A migration recorded in the other cell (as the API role records a queued one) is listed too."""
    cold, _, _ = moved
    cell, _ = _where(api, cold.instance_uuid)
    [other] = [name for name in api.cloud.cell_engines if name != cell]
    flavor = Flavor(name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    with api.cloud.cell_engines[other].begin() as conn:
        planted = migrations.create(
            conn, uuid=str(uuidlib.uuid4()), instance_uuid=str(uuidlib.uuid4()),
            migration_type=migrations.RESIZE, source_host=f'{other}-host1',
            source_node=f'{other}-host1', old_flavor=flavor, new_flavor=flavor)
        migrations.advance(conn, planted.uuid, migrations.ERROR, error='planted')
    listed = check(v2_59.list_migrations, _listed(api, '2.59'))['migrations']
    assert {cold.uuid, planted.uuid} <= {m['uuid'] for m in listed}


def test_os_migrations_is_the_admins(api, moved):
    _, _, token = moved
    refused = _listed(api, '2.59', token=token)
    assert refused.status == 403
    assert 'os_compute_api:os-migrations:index' in refused.json['forbidden']['message']


def test_a_servers_live_migration_in_progress_is_listed_and_shown(api, moved):
    cold, live, token = moved
    server = live.instance_uuid
    for version in ('2.23', '2.58', '2.59', '2.69'):
        mv = tuple(int(p) for p in version.split('.'))
        listed_schema, shown_schema = _server_schemas(mv)
        [listed] = check(listed_schema, api.request(
            'GET', f'/v2.1/servers/{server}/migrations', token=ADMIN,
            version=version))['migrations']
        assert (listed['id'], listed['server_uuid'], listed['status']) == (
            live.id, server, 'migrating')
        assert (listed['source_compute'], listed['dest_compute']) == (
            live.source_host, live.dest_host)
        assert ('uuid' in listed) == (mv >= (2, 59))
        shown = check(shown_schema, api.request(
            'GET', f'/v2.1/servers/{server}/migrations/{live.id}', token=ADMIN,
            version=version))['migration']
        assert shown == listed
    # The cold migration's server has no live migration in progress.
    assert check(servers_v2_1.list_live_migrations, api.request(
        'GET', f'/v2.1/servers/{cold.instance_uuid}/migrations', token=ADMIN,
        version='2.23'))['migrations'] == []


@pytest.mark.parametrize('asked, said', [
    ('cold', 'is not live-migration'),
    ('999999', 'In-progress live migration 999999 is not found for server'),
    ('nope', 'In-progress live migration nope is not found for server'),
])
def test_showing_what_is_no_live_migration_in_progress_of_the_server_is_404(
        api, moved, asked, said):
    cold, _, _ = moved
    migration_id = cold.id if asked == 'cold' else asked
    answer = api.request('GET', f'/v2.1/servers/{cold.instance_uuid}/migrations/'
                                f'{migration_id}', token=ADMIN, version='2.23')
    assert answer.status == 404 and said in answer.json['itemNotFound']['message'], answer.text


def test_server_migrations_are_404_below_their_versions(api, moved):
    _, live, _ = moved
    base = f'/v2.1/servers/{live.instance_uuid}/migrations'
    for method, path, version, body in (
            ('GET', base, '2.22', None), ('GET', f'{base}/{live.id}', '2.22', None),
            ('DELETE', f'{base}/{live.id}', '2.23', None),
            ('POST', f'{base}/{live.id}/action', '2.21', {'force_complete': None})):
        answer = api.request(method, path, body, token=ADMIN, version=version)
        assert answer.status == 404, (method, path, answer.text)


def test_a_member_is_refused_its_own_servers_migrations_and_another_projects_are_not_found(
        api, moved, project):
    _, live, token = moved
    base = f'/v2.1/servers/{live.instance_uuid}/migrations'
    for method, path, body, rule in (
            ('GET', base, None, 'index'), ('GET', f'{base}/{live.id}', None, 'show'),
            ('DELETE', f'{base}/{live.id}', None, 'delete'),
            ('POST', f'{base}/{live.id}/action', {'force_complete': None}, 'force_complete')):
        mine = api.request(method, path, body, token=token, version='2.69')
        assert mine.status == 403, (method, path, mine.text)
        assert f'os_compute_api:servers:migrations:{rule}' in mine.json['forbidden']['message']
        theirs = api.request(method, path, body, token=project[1], version='2.69')
        assert theirs.status == 404 and 'itemNotFound' in theirs.json, (method, theirs.text)
    assert [m.status for m in _migrations_of(api, live.instance_uuid)] == ['migrating']


def test_force_complete_refusals(api, moved):
    cold, live, _ = moved
    base = f'/v2.1/servers/{live.instance_uuid}/migrations'
    bad_body = api.request('POST', f'{base}/{live.id}/action', {'force_complete': 1},
                           token=ADMIN, version='2.22')
    assert bad_body.status == 400, bad_body.text
    for asked in ('999999', 'nope'):
        unknown = api.request('POST', f'{base}/{asked}/action', {'force_complete': None},
                              token=ADMIN, version='2.22')
        assert unknown.status == 400 and (
            f'Migration {asked} not found for instance {live.instance_uuid}' in unknown.text)
        gone = api.request('DELETE', f'{base}/{asked}', token=ADMIN, version='2.24')
        assert gone.status == 404 and (
            f'Migration {asked} not found for instance {live.instance_uuid}' in gone.text)
    # A server that is not live migrating: Nova's 409 naming its task_state.
    idle = api.request('POST', f'/v2.1/servers/{cold.instance_uuid}/migrations/{cold.id}/'
                               f'action', {'force_complete': None}, token=ADMIN, version='2.22')
    assert idle.status == 409 and (
        f"Cannot 'force_complete' instance {cold.instance_uuid} while it is in task_state "
        f"None") in idle.json['conflictingRequest']['message']


def test_an_abort_during_the_copy_leaves_the_server_active_on_its_source_with_its_allocation(
        api, project):
    _, token = project
    server = _boot(api, token)
    cell, row = _where(api, server['id'])
    source = row['host']
    [dest] = [h for h in api.cloud.computes if h.startswith(f'{cell}-') and h != source]
    promised = api.cloud.computes[dest].builder.local_claims.usage()
    with _slow_copies(api, source):
        _live_migrate(api, server['id'])
        live = _copying(api, server['id'])
        assert live.dest_host == dest
        assert _held(api, server['id']) == {dest: SMALL}     # the destination is claimed
        assert _held(api, live.uuid) == {source: SMALL}      # the source, the migration's
        answer = api.request('DELETE', f'/v2.1/servers/{server["id"]}/migrations/{live.id}',
                             token=ADMIN, version='2.24')
        assert answer.status == 202, answer.text
        ended = _ended(api, live.uuid, server['id'])
    assert ended.status == migrations.CANCELLED
    api.wait_for_status(server['id'], 'ACTIVE', token=token)
    _, row = _where(api, server['id'])
    assert (row['host'], row['vm_state'], row['task_state']) == (source, 'active', None)
    # Placement follows the cancel (the cell conductor's compare-and-set decides first).
    api.wait_until(lambda: (_held(api, server['id']), _held(api, live.uuid)) == (
        {source: SMALL}, {}), 'the source allocation the server\'s again')
    assert server['id'] in api.cloud.computes[source].driver.running()
    api.wait_until(lambda: api.cloud.computes[dest].builder.local_claims.usage() == promised,
                   'the destination forgot its promise')
    assert server['id'] not in api.cloud.computes[dest].driver.list_instances()
    # Over: it can no longer be aborted, nor shown as in progress.
    again = api.request('DELETE', f'/v2.1/servers/{server["id"]}/migrations/{live.id}',
                        token=ADMIN, version='2.24')
    assert again.status == 409 and 'task_state None' in again.text
    assert api.request('GET', f'/v2.1/servers/{server["id"]}/migrations/{live.id}',
                       token=ADMIN, version='2.23').status == 404


def test_force_complete_ends_the_copy_and_the_server_switches_over(api, project):
    _, token = project
    server = _boot(api, token)
    _, row = _where(api, server['id'])
    source = row['host']
    with _slow_copies(api, source):
        _live_migrate(api, server['id'])
        live = _copying(api, server['id'])
        answer = api.request('POST', f'/v2.1/servers/{server["id"]}/migrations/{live.id}/'
                                     f'action', {'force_complete': None}, token=ADMIN,
                             version='2.22')
        assert answer.status == 202, answer.text
        ended = _ended(api, live.uuid, server['id'])
    assert ended.status == migrations.DONE
    _, row = _where(api, server['id'])
    assert row['host'] == live.dest_host
    assert _held(api, server['id']) == {live.dest_host: SMALL}


def test_before_2_65_only_a_copying_live_migration_is_aborted_and_from_2_65_one_preparing_too(
        api, project):
    """The destination is stopped, so the move waits there, pre-migrating; its source never copies."""
    _, token = project
    server = _boot(api, token)
    cell, row = _where(api, server['id'])
    source = row['host']
    [dest] = [h for h in api.cloud.computes if h.startswith(f'{cell}-') and h != source]
    agent = api.cloud.agents[cell]
    agent.stop_host(dest)
    try:
        _live_migrate(api, server['id'], host=dest)
        api.wait_until(lambda: [m.status for m in _migrations_of(api, server['id'])] == [
            migrations.PRE_MIGRATING], 'the move waiting on its destination')
        [waiting] = _migrations_of(api, server['id'])
        path = f'/v2.1/servers/{server["id"]}/migrations/{waiting.id}'
        early = api.request('DELETE', path, token=ADMIN, version='2.64')
        assert early.status == 400 and (
            f'Migration {waiting.id} state of instance {server["id"]} is pre-migrating. '
            f'Cannot abort live migration while the migration is in this state.'
        ) in early.json['badRequest']['message']
        assert api.request('DELETE', path, token=ADMIN, version='2.65').status == 202
    finally:
        agent.start_host(dest)
    ended = _ended(api, waiting.uuid, server['id'])
    assert ended.status == migrations.CANCELLED
    _, row = _where(api, server['id'])
    assert (row['host'], row['task_state']) == (source, None)
    assert server['id'] in api.cloud.computes[source].driver.running()
    api.wait_until(lambda: (_held(api, server['id']), _held(api, waiting.uuid)) == (
        {source: SMALL}, {}), 'the source allocation the server\'s again')


class _HeldConductor:
    """A super conductor API that keeps the casts (the move stays queued) until ``release``."""

    def __init__(self, real):
        self.real, self.held = real, []

    def migrate_server(self, ctxt, cell_uuid, migration_uuid):
        self.held.append((ctxt, cell_uuid, migration_uuid))

    def release(self):
        for args in self.held:
            self.real.migrate_server(*args)


def test_a_queued_live_migration_aborted_is_cancelled_at_once_and_never_scheduled(
        api, project):
    _, token = project
    server = _boot(api, token)
    _, row = _where(api, server['id'])
    services = api.services
    conductor = _HeldConductor(services.conductor)
    queued = moves.live_migrate(services.api_engine, services.cells, conductor,
                                new_context(), server['id'])
    assert queued.status == migrations.QUEUED
    answer = api.request('DELETE', f'/v2.1/servers/{server["id"]}/migrations/{queued.id}',
                         token=ADMIN, version='2.65')
    assert answer.status == 202, answer.text
    [cancelled] = _migrations_of(api, server['id'])
    assert cancelled.status == migrations.CANCELLED
    _, after = _where(api, server['id'])
    assert (after['host'], after['task_state']) == (row['host'], None)
    conductor.release()           # the cast arrives after the abort: nothing is scheduled
    api.wait_until(lambda: _held(api, server['id']) == {row['host']: SMALL},
                   'the server holding its own allocation')
    assert _held(api, cancelled.uuid) == {}
    assert [m.status for m in _migrations_of(api, server['id'])] == [migrations.CANCELLED]



def test_a_cell_that_cannot_be_read_is_left_out_and_the_others_listed(tmp_path):
    cloud = ComputeCloud(tmp_path, cells=1, hosts_per_cell=1)
    try:
        flavor = Flavor(name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
        with cloud.cloud.cell_engines['cell1'].begin() as conn:
            planted = migrations.create(
                conn, uuid=str(uuidlib.uuid4()), instance_uuid=str(uuidlib.uuid4()),
                migration_type=migrations.MIGRATION, source_host='cell1-host1',
                source_node='cell1-host1', old_flavor=flavor, new_flavor=flavor)
        with socket.socket() as probe:
            probe.bind(('127.0.0.1', 0))
            port = probe.getsockname()[1]
        cell_mappings.create(
            cloud.services.api_engine, name='dead', transport_url='fake:///dead',
            database_connection=f'postgresql+psycopg2://x@127.0.0.1:{port}/none')
        cloud.services.cells.reload()
        for version, schema in (('2.1', v2_1.list_migrations),
                                ('2.59', v2_59.list_migrations)):
            listed = check(schema, cloud.request('GET', '/v2.1/os-migrations', token=ADMIN,
                                                 version=version))['migrations']
            assert [(m['instance_uuid'], m['status']) for m in listed] == [
                (planted.instance_uuid, 'queued')]
    finally:
        cloud.stop()
