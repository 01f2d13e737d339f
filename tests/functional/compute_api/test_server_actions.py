"""``POST /servers/{id}/action``: migrate, resize, confirm/revertResize, os-migrateLive, evacuate, as Nova answers.

Over the embedded control plane (one cell of two hosts): the actions call
the same ``cellplane_api.moves`` as the CLI, and the moves really happen.
"""
from __future__ import annotations

import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import servers as schemas

from cellplane.objects import flavors, instances, migrations, services
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('server-actions'), cells=1, hosts_per_cell=2)
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    flavors.create(engine, name='large', vcpus=2, memory_mb=512, root_gb=1, flavorid='large')
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _active(api, token, name='vm') -> dict:
    answer = api.request('POST', '/v2.1/servers', {'server': {
        'name': name, 'flavorRef': 'small', 'imageRef': 'cirros'}}, token=token)
    return api.wait_for_status(answer.json['server']['id'], 'ACTIVE', token=token)


def _act(api, server_id, body, token):
    return api.request('POST', f'/v2.1/servers/{server_id}/action', body, token=token)


def _migrations(api, server_id):
    cell = api.cloud.cell_engines['cell1']
    with cell.connect() as conn:
        return migrations.find(conn, instance_uuid=server_id)


def test_a_member_resizes_and_confirms(api, project):
    _, token = project
    server = _active(api, token)
    check(schemas.server_actions_common_schema,
          _act(api, server['id'], {'resize': {'flavorRef': 'large'}}, token))
    waiting = api.wait_for_status(server['id'], 'VERIFY_RESIZE', token=token)
    assert waiting['flavor']['id'] == 'large'
    assert waiting['hostId'] != server['hostId']   # the other host: the source is excluded
    check(schemas.server_actions_confirm_resize,
          _act(api, server['id'], {'confirmResize': None}, token))
    api.wait_for_status(server['id'], 'ACTIVE', token=token)
    [moved] = _migrations(api, server['id'])
    assert (moved.migration_type, moved.status) == (migrations.RESIZE, migrations.CONFIRMED)


def test_migrate_is_the_admins_and_a_member_reverts_it(api, project):
    _, token = project
    server = _active(api, token)
    refused = _act(api, server['id'], {'migrate': None}, token)
    assert refused.status == 403 and 'forbidden' in refused.json
    check(schemas.server_actions_common_schema,
          _act(api, server['id'], {'migrate': None}, ADMIN))
    api.wait_for_status(server['id'], 'VERIFY_RESIZE', token=token)
    check(schemas.server_actions_common_schema,
          _act(api, server['id'], {'revertResize': None}, token))
    back = api.wait_for_status(server['id'], 'ACTIVE', token=token)
    assert back['hostId'] == server['hostId'] and back['flavor']['id'] == 'small'
    [moved] = _migrations(api, server['id'])
    assert (moved.migration_type, moved.status) == (migrations.MIGRATION, migrations.REVERTED)


@pytest.mark.parametrize('body, status, kind, said', [
    ({'confirmResize': None}, 409, 'conflictingRequest', 'no move waiting to be confirmed'),
    ({'revertResize': None}, 409, 'conflictingRequest', 'no move waiting to be confirmed'),
    ({'resize': {'flavorRef': 'nope'}}, 400, 'badRequest', 'Unable to find flavor nope'),
    ({'resize': {'flavorRef': 'small'}}, 400, 'badRequest', 'has flavor small already'),
    ({'resize': {}}, 400, 'badRequest', 'flavorRef'),
    ({'resize': None, 'migrate': None}, 400, 'badRequest', ''),
    ({'shelve': None}, 400, 'badRequest', 'not supported'),
])
def test_refusals_are_novas_and_write_nothing(api, project, body, status, kind, said):
    _, token = project
    server = _active(api, token)
    answer = _act(api, server['id'], body, token)
    assert answer.status == status and said in answer.json[kind]['message'], answer.text
    assert _migrations(api, server['id']) == []


def test_another_projects_server_is_not_found(api, project):
    _, token = project
    server = _active(api, token)
    answer = _act(api, server['id'], {'resize': {'flavorRef': 'large'}}, 'other-user:other')
    assert answer.status == 404 and 'itemNotFound' in answer.json


def test_the_admin_live_migrates_a_server_to_the_host_it_names(api, project):
    _, token = project
    server = _active(api, token)
    cell = api.cloud.cell_engines['cell1']
    with cell.connect() as conn:
        source = instances.get_instance(conn, server['id'])['host']
    [other] = [h for h in api.cloud.computes if h != source]
    body = {'os-migrateLive': {'host': other, 'block_migration': False,
                               'disk_over_commit': False}}
    assert _act(api, server['id'], body, token).status == 403
    refused = _act(api, server['id'], {'os-migrateLive': {'host': other}}, ADMIN)
    assert refused.status == 400 and 'block_migration' in refused.text
    check(schemas.server_actions_common_schema, _act(api, server['id'], body, ADMIN))
    api.wait_until(lambda: [m.status for m in _migrations(api, server['id'])] == [
        migrations.DONE], 'the live migration done')
    [moved] = _migrations(api, server['id'])
    assert (moved.migration_type, moved.dest_host) == (migrations.LIVE_MIGRATION, other)
    assert api.wait_for_status(server['id'], 'ACTIVE', token=token)['hostId'] != \
        server['hostId']


def test_the_admin_evacuates_a_server_once_its_host_is_down_as_nova_answers(api, project):
    _, token = project
    server = _active(api, token)
    cell = api.cloud.cell_engines['cell1']
    with cell.connect() as conn:
        source = instances.get_instance(conn, server['id'])['host']
    [other] = [h for h in api.cloud.computes if h != source]
    url = f'/v2.1/servers/{server["id"]}/action'
    v214 = {'evacuate': {}}
    assert api.request('POST', url, v214, token=token, version='2.14').status == 403
    alive = api.request('POST', url, v214, token=ADMIN, version='2.14')
    assert alive.status == 400 and 'is still in use' in alive.json['badRequest']['message']
    assert _migrations(api, server['id']) == []

    api.cloud.agents['cell1'].stop_host(source)
    assert services.set_forced_down(cell, source, 'cellplane-compute', forced_down=True)
    try:
        for body, version, status, said in (
                ({'evacuate': {}}, '2.1', 400, 'onSharedStorage'),
                ({'evacuate': {'onSharedStorage': False}}, '2.14', 400, 'onSharedStorage'),
                ({'evacuate': {'force': True}}, '2.28', 400, 'force'),
                ({'evacuate': {'force': True}}, '2.29', 400, 'non-provided destination'),
                ({'evacuate': {'host': source}}, '2.29', 400, "can't be the same one"),
                ({'evacuate': {'host': 'nowhere'}}, '2.29', 404, 'nowhere not found')):
            answer = api.request('POST', url, body, token=ADMIN, version=version)
            kind = 'itemNotFound' if status == 404 else 'badRequest'
            assert answer.status == status and said in answer.json[kind]['message'], (
                body, version, answer.text)
        assert _migrations(api, server['id']) == []
        done = api.request('POST', url, {'evacuate': {'onSharedStorage': 'False',
                                                      'adminPass': 'x'}},
                           token=ADMIN, version='2.1')
        assert (done.status, done.text) == (200, '')
        api.wait_until(lambda: [m.status for m in _migrations(api, server['id'])] == [
            migrations.DONE], 'the evacuation done')
        moved = api.wait_for_status(server['id'], 'ACTIVE', token=ADMIN)
        assert moved['OS-EXT-SRV-ATTR:host'] == other
        answer = api.request('GET', f'/v2.1/servers/{server["id"]}/os-instance-actions',
                             token=ADMIN)
        assert answer.json['instanceActions'][0]['action'] == 'evacuate'
    finally:
        services.set_forced_down(cell, source, 'cellplane-compute', forced_down=False)
        api.cloud.agents['cell1'].start_host(source)
    api.wait_until(lambda: [m.status for m in _migrations(api, server['id'])] == [
        migrations.COMPLETED], 'the returning host cleaned up')


@pytest.mark.parametrize('version, body, accepted', [
    ('2.24', {'host': None, 'block_migration': False, 'disk_over_commit': False}, True),
    ('2.24', {'host': None, 'block_migration': 'auto', 'disk_over_commit': False}, False),
    ('2.25', {'host': None, 'block_migration': 'auto'}, True),     # openstackclient's, 2.25+
    ('2.25', {'host': None, 'block_migration': False, 'disk_over_commit': False}, False),
    ('2.30', {'host': None, 'block_migration': 'auto', 'force': False}, True),
    ('2.68', {'host': None, 'block_migration': 'auto', 'force': False}, False),
])
def test_live_migrate_bodies_follow_novas_microversions(api, project, version, body, accepted):
    _, token = project
    server = _active(api, token)
    answer = api.request('POST', f'/v2.1/servers/{server["id"]}/action',
                         {'os-migrateLive': body}, token=ADMIN, version=version)
    if not accepted:
        assert answer.status == 400 and 'badRequest' in answer.json, answer.text
        assert _migrations(api, server['id']) == []
        return
    check(schemas.server_actions_common_schema, answer)
    api.wait_until(lambda: [m.status for m in _migrations(api, server['id'])] == [
        migrations.DONE], 'the live migration done')
