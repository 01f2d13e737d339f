"""``/os-server-groups`` through the compute API, in-process over the embedded control plane.

Every answer is validated against tempest's server group schemas at the
versions where the document changes (2.1, 2.13, 2.64); the rules map to
the group cellplane stores (level, max_per_domain) and back. Each test
uses its own project, so they share one cloud.
"""
from __future__ import annotations

import dataclasses
import uuid as uuidlib

import pytest
from tempest.lib.api_schema.response.compute.v2_1 import server_groups as v2_1
from tempest.lib.api_schema.response.compute.v2_13 import server_groups as v2_13
from tempest.lib.api_schema.response.compute.v2_64 import server_groups as v2_64

from cellplane.objects import failure_domain_levels, flavors, server_groups
from cellplane_api import server_groups as groups
from cellplane_api import service_conf, wsgi
from tests.functional.compute_api.harness import ComputeCloud, check

ADMIN = 'admin:admin'
SCHEMAS = {'2.1': v2_1, '2.12': v2_1, '2.13': v2_13, '2.15': v2_13, '2.63': v2_13,
           '2.64': v2_64, '2.69': v2_64}


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api-groups'), cells=1,
                         hosts_per_cell=2)
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    # The levels a scheduler with failure_domain_levels = rack, row would record.
    with engine.begin() as conn:
        failure_domain_levels.replace(conn, ['rack', 'row'])
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _create(api, token, version, name='web', **fields):
    return api.request('POST', '/v2.1/os-server-groups',
                       {'server_group': {'name': name, **fields}}, token=token,
                       version=version)


def _stored(api, group_id) -> server_groups.ServerGroup:
    return server_groups.get(api.services.api_engine, group_id)


def _count(api) -> int:
    return len(server_groups.list_all(api.services.api_engine))


@pytest.mark.parametrize('version', ['2.1', '2.12', '2.13', '2.63'])
def test_below_2_64_a_group_has_policies_and_metadata_and_from_2_13_its_owner(api, project,
                                                                              version):
    name, token = project
    schema = SCHEMAS[version]
    made = check(schema.create_show_server_group,
                 _create(api, token, version, policies=['anti-affinity']))['server_group']
    assert (made['policies'], made['members'], made['metadata']) == (['anti-affinity'], [], {})
    assert ('project_id' in made) == (version >= '2.13')
    if version >= '2.13':
        assert (made['project_id'], made['user_id']) == (name, f'{name}-user')
    shown = check(schema.create_show_server_group, api.request(
        'GET', f'/v2.1/os-server-groups/{made["id"]}', token=token, version=version))
    assert shown['server_group'] == made
    listed = check(schema.list_server_groups, api.request(
        'GET', '/v2.1/os-server-groups', token=token, version=version))
    assert listed['server_groups'] == [made]
    stored = _stored(api, made['id'])
    assert (stored.policy, stored.level, stored.max_per_domain) == ('anti-affinity', 'host', 1)


@pytest.mark.parametrize('version, policy, ok', [
    ('2.14', 'soft-anti-affinity', False), ('2.15', 'soft-anti-affinity', True),
    ('2.15', 'soft-affinity', True), ('2.1', 'affinity', True)])
def test_soft_policies_are_accepted_from_2_15(api, project, version, policy, ok):
    _, token = project
    before = _count(api)
    answer = _create(api, token, version, policies=[policy])
    if ok:
        assert check(v2_13.create_show_server_group if version >= '2.13'
                     else v2_1.create_show_server_group, answer)['server_group'][
            'policies'] == [policy]
    else:
        assert answer.status == 400, answer.text
        assert 'server_group.policies' in answer.json['badRequest']['message']
        assert _count(api) == before


@pytest.mark.parametrize('rules, level, bound', [
    ({}, 'host', 1),
    ({'max_server_per_host': 3}, 'host', 3),
    ({'max_server_per_host': '2'}, 'host', 2),                 # as the clients send it
    ({'failure_domain': 'rack'}, 'rack', 1),
    ({'failure_domain': 'rack', 'max_server_per_domain': '2'}, 'rack', 2),
    ({'failure_domain': 'row', 'max_server_per_domain': 4}, 'row', 4),
])
def test_from_2_64_rules_carry_the_level_and_the_bound_per_domain(api, project, rules, level,
                                                                  bound):
    _, token = project
    made = check(v2_64.create_show_server_group, _create(
        api, token, '2.64', policy='anti-affinity', rules=rules))['server_group']
    stored = _stored(api, made['id'])
    assert (stored.policy, stored.level, stored.max_per_domain) == ('anti-affinity', level,
                                                                    bound)
    # Shown back as the rules that describe it (numbers as numbers, defaults left out).
    expected = {**({'failure_domain': level} if level != 'host' else {}),
                **({('max_server_per_host' if level == 'host' else 'max_server_per_domain'):
                    bound} if bound != 1 else {})}
    assert made['rules'] == expected
    assert made['policy'] == 'anti-affinity' and 'policies' not in made
    for version in ('2.64', '2.69'):
        shown = check(v2_64.create_show_server_group, api.request(
            'GET', f'/v2.1/os-server-groups/{made["id"]}', token=token, version=version))
        assert shown['server_group'] == made


def test_affinity_at_a_failure_domain_level_is_a_rule_too(api, project):
    _, token = project
    made = check(v2_64.create_show_server_group, _create(
        api, token, '2.64', policy='affinity', rules={'failure_domain': 'rack'}))['server_group']
    assert made['rules'] == {'failure_domain': 'rack'}
    assert _stored(api, made['id']).level == 'rack'
    # Below 2.64 the same group shows its policy only.
    old = check(v2_13.create_show_server_group, api.request(
        'GET', f'/v2.1/os-server-groups/{made["id"]}', token=token, version='2.63'))
    assert old['server_group']['policies'] == ['affinity']


@pytest.mark.parametrize('fields, named', [
    ({'policy': 'anti-affinity', 'rules': {'max_server_per_rack': 2}}, 'max_server_per_rack'),
    ({'policy': 'anti-affinity', 'rules': {'failure_domain': 'galaxy'}}, 'failure_domain'),
    ({'policy': 'anti-affinity', 'rules': {'failure_domain': 'galaxy'}}, 'galaxy'),
    ({'policy': 'affinity', 'rules': {'max_server_per_host': 2}}, 'max_server_per_host'),
    ({'policy': 'anti-affinity', 'rules': {'max_server_per_host': 0}}, 'max_server_per_host'),
    ({'policy': 'anti-affinity', 'rules': {'max_server_per_domain': 'two'}},
     'max_server_per_domain'),
    ({'policy': 'anti-affinity', 'rules': {'failure_domain': 'rack',
                                           'max_server_per_host': 2}}, 'max_server_per_host'),
    ({'policy': 'anti-affinity', 'rules': {'failure_domain': 5}}, 'failure_domain'),
    ({'policy': 'near-ish'}, 'server_group.policy'),
    ({'policies': ['affinity']}, 'server_group'),
    ({'policy': 'affinity', 'name': ' padded'}, 'server_group.name'),
    ({'policy': 'affinity', 'name': ''}, 'server_group.name'),
])
def test_a_bad_group_is_400_naming_what_is_wrong_and_writes_nothing(api, project, fields,
                                                                    named):
    _, token = project
    before = _count(api)
    answer = _create(api, token, '2.64', **{'name': 'bad', **fields})
    assert answer.status == 400, answer.text
    message = answer.json['badRequest']['message']
    assert named in message and '\n' not in message, message
    assert _count(api) == before


_SHAPES = [b'', b'not json', b'{"a": ', b'null', b'[]', b'"text"', b'1', b'{}',
           b'{"server_group": null}', b'{"server_group": []}', b'{"server_group": {}}',
           b'{"server_group": {"name": null, "policies": ["affinity"]}}',
           b'{"server_group": {"name": "' + b'x' * 256 + b'", "policies": ["affinity"]}}',
           b'{"server_group": {"name": "x", "policies": "affinity"}}',
           b'{"server_group": {"name": "x", "policies": []}}',
           b'{"server_group": {"name": "x", "policies": ["affinity", "anti-affinity"]}}',
           b'{"server_group": {"name": "x", "policies": [null]}}',
           b'{"server_group": {"name": "x", "policy": "affinity", "rules": []}}',
           b'{"server_group": {"name": "x", "policy": "affinity", "rules": null}}',
           b'{"server_group": {"name": "x", "policy": null}}',
           b'{"server_group": {"name": "x", "policy": "anti-affinity", '
           b'"rules": {"max_server_per_host": 1180591620717411303424}}}',
           b'{"server_group": {"name": "x", "policy": "anti-affinity", '
           b'"rules": {"max_server_per_host": 1.5}}}',
           b'{"server_group": {"name": "x", "policy": "anti-affinity", '
           b'"rules": {"failure_domain": null}}}',
           b'{"server_group": {"name": "x", "policies": ["affinity"]}, "extra": 1}']


@pytest.mark.parametrize('version', ['2.1', '2.64'])
@pytest.mark.parametrize('raw', _SHAPES)
def test_a_body_of_the_wrong_shape_is_a_novas_4xx_and_writes_nothing(api, project, version,
                                                                     raw):
    _, token = project
    before = _count(api)
    answer = api.request('POST', '/v2.1/os-server-groups', raw=raw, token=token,
                         version=version)
    assert 400 <= answer.status < 500, (answer.status, answer.text)
    (detail,) = answer.json.values()
    assert detail['code'] == answer.status and '\n' not in detail['message']
    assert _count(api) == before


def test_a_duplicate_name_in_a_project_is_409(api, project):
    _, token = project
    _create(api, token, '2.64', name='twice', policy='affinity')
    answer = _create(api, token, '2.64', name='twice', policy='affinity')
    assert answer.status == 409
    assert 'twice' in answer.json['conflictingRequest']['message']


def test_members_are_its_servers_and_leave_when_deleted(api, project):
    _, token = project
    group = _create(api, token, '2.64', policy='anti-affinity').json['server_group']
    booted = api.request('POST', '/v2.1/servers', {
        'server': {'name': 'member', 'flavorRef': 'small', 'imageRef': 'cirros',
                   'min_count': 2, 'max_count': 2},
        'os:scheduler_hints': {'group': group['id']}}, token=token)
    assert booted.status == 202, booted.text
    members = check(v2_64.create_show_server_group, api.request(
        'GET', f'/v2.1/os-server-groups/{group["id"]}', token=token,
        version='2.64'))['server_group']['members']
    listed = {s['id'] for s in api.request('GET', '/v2.1/servers', token=token).json['servers']}
    assert len(members) == 2 and set(members) == listed
    # Listed beside a group without members, each with its own.
    _create(api, token, '2.64', name='empty', policy='affinity')
    in_list = {g['name']: g['members'] for g in api.request(
        'GET', '/v2.1/os-server-groups', token=token, version='2.64').json['server_groups']}
    assert in_list == {'web': members, 'empty': []}
    for member in members:
        api.wait_for_status(member, 'ACTIVE', token=token)
    assert api.request('DELETE', f'/v2.1/servers/{members[0]}', token=token).status == 204
    left = api.request('GET', f'/v2.1/os-server-groups/{group["id"]}', token=token,
                       version='2.64').json['server_group']['members']
    assert left == [members[1]]


def test_delete_is_204_and_the_group_is_gone(api, project):
    _, token = project
    group = _create(api, token, '2.1', policies=['affinity']).json['server_group']
    deleted = api.request('DELETE', f'/v2.1/os-server-groups/{group["id"]}', token=token)
    check(v2_1.delete_server_group, deleted)
    again = api.request('GET', f'/v2.1/os-server-groups/{group["id"]}', token=token)
    assert again.status == 404
    assert again.json['itemNotFound']['message'] == (
        f'Instance group {group["id"]} could not be found.')


def test_another_projects_group_is_404_and_unlisted_and_untouched(api, project):
    _, token = project
    group = _create(api, token, '2.64', name='mine', policy='affinity').json['server_group']
    stranger = 'someone:elsewhere'
    for method in ('GET', 'DELETE'):
        answer = api.request(method, f'/v2.1/os-server-groups/{group["id"]}', token=stranger)
        assert answer.status == 404, (method, answer.text)
    # By name neither: the URL takes an id.
    assert api.request('GET', '/v2.1/os-server-groups/mine', token=token).status == 404
    assert api.request('GET', '/v2.1/os-server-groups?all_projects=True',
                       token=stranger).json['server_groups'] == []
    assert _stored(api, group['id']).name == 'mine'


def test_a_reader_reads_but_may_not_create_or_delete_with_novas_403(api, project):
    name, token = project
    group = _create(api, token, '2.64', policy='affinity').json['server_group']
    reader = {'X-Roles': 'reader'}
    assert api.request('GET', f'/v2.1/os-server-groups/{group["id"]}', token=token,
                       headers=reader).status == 200
    for method, path, body, rule in (
            ('POST', '/v2.1/os-server-groups',
             {'server_group': {'name': 'r', 'policies': ['affinity']}}, 'create'),
            ('DELETE', f'/v2.1/os-server-groups/{group["id"]}', None, 'delete')):
        answer = api.request(method, path, body, token=token, headers=reader)
        assert answer.status == 403, answer.text
        assert answer.json == {'forbidden': {
            'code': 403, 'message': f"Policy doesn't allow os_compute_api:os-server-groups:"
                                    f"{rule} to be performed."}}
    assert _stored(api, group['id']).project_id == name


def test_an_admin_lists_every_projects_groups_with_all_projects_and_pages(api, project):
    name, token = project
    mine = [_create(api, token, '2.13', name=f'g{i}', policies=['affinity']).json[
        'server_group']['id'] for i in range(3)]
    everyone = check(v2_13.list_server_groups, api.request(
        'GET', '/v2.1/os-server-groups?all_projects=True', token=ADMIN, version='2.13'))
    assert set(mine) <= {g['id'] for g in everyone['server_groups']}
    assert len({g['project_id'] for g in everyone['server_groups']}) > 1
    # Without all_projects an admin sees its own project's.
    assert all(g['project_id'] == 'admin' for g in api.request(
        'GET', '/v2.1/os-server-groups', token=ADMIN, version='2.13').json['server_groups'])
    # A member's all_projects is ignored, as in Nova: its own only, oldest first.
    own = api.request('GET', '/v2.1/os-server-groups?all_projects=1', token=token).json
    assert [g['id'] for g in own['server_groups']] == mine
    paged = api.request('GET', '/v2.1/os-server-groups?limit=1&offset=1', token=token).json
    assert [g['id'] for g in paged['server_groups']] == mine[1:2]
    for bad in ('limit=-1', 'offset=x'):
        answer = api.request('GET', f'/v2.1/os-server-groups?{bad}', token=token)
        assert answer.status == 400 and bad.split('=')[0] in answer.json['badRequest'][
            'message']


class _Refusing:
    """A quota that lets ``allowed`` groups exist (counted from the database, as a driver would)."""

    def __init__(self, engine, allowed: int):
        self.engine, self.allowed, self.asked = engine, allowed, []

    def check(self, project_id, user_id, delta):
        self.asked.append(delta)
        held = len(server_groups.list_all(self.engine, project_id=project_id))
        if held + delta > self.allowed:
            # The database driver's words (the handler answers the driver's message).
            raise groups.QuotaExceeded('Quota exceeded, too many server groups.')


def _app_with(api, quota):
    """Another app over the same cloud whose group quota is ``quota``."""
    services = dataclasses.replace(api.services, group_quota=quota)
    return wsgi.make_app(services, conf=service_conf.defaults(), auth_strategy='noauth2')


def test_over_the_group_quota_is_novas_403_and_nothing_is_written(api, project):
    _, token = project
    quota = _Refusing(api.services.api_engine, allowed=1)
    app = _app_with(api, quota)
    first = api.request('POST', '/v2.1/os-server-groups',
                        {'server_group': {'name': 'one', 'policies': ['affinity']}},
                        token=token, app=app)
    assert first.status == 200, first.text
    before = _count(api)
    second = api.request('POST', '/v2.1/os-server-groups',
                         {'server_group': {'name': 'two', 'policies': ['affinity']}},
                         token=token, app=app)
    assert second.status == 403
    assert second.json == {'forbidden': {'code': 403, 'message':
                                         'Quota exceeded, too many server groups.'}}
    assert _count(api) == before
    # Asked before writing (one more) and again after (the new one counted).
    assert quota.asked == [1, 0, 1]


def test_a_group_written_past_the_quota_by_a_concurrent_create_is_removed(api, project):
    name, _ = project

    class _RacedPast:
        """Lets the first check through (another create won the race meanwhile), refuses the recheck."""

        def check(self, project_id, user_id, delta):
            if delta == 0:
                raise groups.QuotaExceeded('over after writing')

    with pytest.raises(groups.QuotaExceeded):
        groups.create(api.services.api_engine, project_id=name, user_id=None, name='raced',
                      policy='affinity', quota=_RacedPast())
    assert server_groups.list_all(api.services.api_engine, project_id=name) == []
