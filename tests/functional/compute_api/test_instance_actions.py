"""``os-instance-actions`` and ``os-scheduling-records`` through the compute API, in-process.

One cell of three hosts: ``cell1-host1`` (zone ``steady``) builds, the two
of zone ``flaky`` fail every build with a reason of their own. A server
booted into ``flaky`` ends in ERROR after trying both; its ``create``
action's events say which host failed and why, as ``openstack server
event show`` shows them. Answers are validated against tempest's schemas
where they change (2.1, 2.51, 2.58, 2.62); the scheduling records against
the shape this API documents. Each test uses its own project.
"""
from __future__ import annotations

import datetime
import hashlib
import time
import uuid as uuidlib

import jsonschema
import pytest
from tempest.lib.api_schema.response.compute.v2_1 import servers as v2_1
from tempest.lib.api_schema.response.compute.v2_51 import servers as v2_51
from tempest.lib.api_schema.response.compute.v2_58 import servers as v2_58
from tempest.lib.api_schema.response.compute.v2_62 import servers as v2_62

from cellplane.objects import aggregates, build_requests, flavors
from cellplane_api import servers
from compute_agent.virt.fake import FakeSettings
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from tests.functional.compute_api.harness import DEADLINE_SECONDS, ComputeCloud, check

ADMIN = 'admin:admin'
STEADY, FLAKY = 'cell1-host1', ('cell1-host2', 'cell1-host3')


def _reason(host: str) -> str:
    return f'No more IP addresses on {host}'


def _driver(cell: str, host: str) -> FakeSettings:
    if host in FLAKY:
        return FakeSettings(fail_all=True, failure_reason=_reason(host))
    return FakeSettings()


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    # The huge flavor is meant to reach the scheduler (NoValidHost), not the cores quota.
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api-actions'), cells=1,
                         hosts_per_cell=3, driver_for=_driver, quota={'cores': -1})
    engine = cloud.services.api_engine
    flavors.create(engine, name='small', vcpus=1, memory_mb=256, root_gb=1, flavorid='small')
    flavors.create(engine, name='huge', vcpus=4096, memory_mb=256, root_gb=1, flavorid='huge')
    for zone, hosts in (('steady', [STEADY]), ('flaky', list(FLAKY))):
        aggregates.create(engine, f'{zone}-hosts', zone=zone)
        for host in hosts:
            aggregates.add_host(engine, f'{zone}-hosts', host)
    yield cloud
    cloud.stop()


@pytest.fixture
def project():
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    return name, f'{name}-user:{name}'


def _boot(api, token, zone, *, flavor='small', wanted='ACTIVE') -> str:
    answer = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'srv', 'flavorRef': flavor, 'imageRef': 'cirros', 'availability_zone': zone}},
        token=token)
    assert answer.status == 202, answer.text
    server_id = answer.json['server']['id']
    api.wait_for_status(server_id, wanted, token=token)
    return server_id


def _actions(api, server_id, token, version='2.1', query=''):
    return api.request('GET', f'/v2.1/servers/{server_id}/os-instance-actions{query}',
                       token=token, version=version)


def _action(api, server_id, request_id, token, version):
    return api.request('GET', f'/v2.1/servers/{server_id}/os-instance-actions/{request_id}',
                       token=token, version=version)


def _is_time(value) -> bool:
    datetime.datetime.fromisoformat(value)
    return True


def _host_id(project_id: str, host: str) -> str:
    return hashlib.sha224(f'{project_id}{host}'.encode()).hexdigest()


@pytest.fixture(scope='module')
def steady(api):
    """An ACTIVE server of its own project: (project, token, server id, its create action)."""
    name = f'p-{uuidlib.uuid4().hex[:8]}'
    token = f'{name}-user:{name}'
    server_id = _boot(api, token, 'steady')
    listed = check(v2_1.list_instance_actions, _actions(api, server_id, token))
    (action,) = listed['instanceActions']
    return name, token, server_id, action


def test_a_server_has_its_create_action_with_its_request_and_owner(api, steady):
    name, token, server_id, action = steady
    assert action['action'] == 'create' and action['instance_uuid'] == server_id
    assert (action['project_id'], action['user_id']) == (name, f'{name}-user')
    assert action['request_id'].startswith('req-') and action['message'] is None
    assert _is_time(action['start_time'])


def test_the_create_action_carries_the_request_id_the_caller_got_back(api, project):
    name, token = project
    answer = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'srv', 'flavorRef': 'small', 'imageRef': 'cirros', 'availability_zone': 'steady'}},
        token=token)
    assert answer.status == 202, answer.text
    request_id = answer.headers['x-openstack-request-id']
    server_id = answer.json['server']['id']
    api.wait_for_status(server_id, 'ACTIVE', token=token)
    (action,) = check(v2_1.list_instance_actions,
                      _actions(api, server_id, token))['instanceActions']
    assert action['request_id'] == request_id
    shown = check(v2_1.show_instance_action, _action(api, server_id, request_id, token, '2.1'))
    assert shown['instanceAction']['instance_uuid'] == server_id


def test_below_2_51_events_are_an_admins_with_their_traceback(api, steady):
    _, token, server_id, action = steady
    for version in ('2.1', '2.50'):
        mine = check(v2_1.show_instance_action, _action(
            api, server_id, action['request_id'], token, version))['instanceAction']
        assert 'events' not in mine
        assert mine == action
    theirs = check(v2_1.show_instance_action, _action(
        api, server_id, action['request_id'], ADMIN, '2.50'))['instanceAction']
    assert [(e['event'], e['result'], e['traceback']) for e in theirs['events']] == [
        ('conductor_schedule_and_build_instances', 'Success', None),
        ('compute_build_and_run_instance', 'Success', None)]
    assert all(_is_time(e['start_time']) and _is_time(e['finish_time'])
               for e in theirs['events'])


def test_from_2_51_the_owner_sees_events_without_traceback(api, steady):
    _, token, server_id, action = steady
    shown = check(v2_51.show_instance_action, _action(
        api, server_id, action['request_id'], token, '2.51'))['instanceAction']
    assert [e['result'] for e in shown['events']] == ['Success', 'Success']
    assert not any('traceback' in e or 'host' in e for e in shown['events'])


def test_from_2_58_actions_have_updated_at(api, steady):
    _, token, server_id, action = steady
    listed = check(v2_58.list_instance_actions, _actions(api, server_id, token, '2.58'))
    (newer,) = listed['instanceActions']
    assert newer == {**action, 'updated_at': newer['updated_at']}
    assert newer['updated_at'] >= newer['start_time']
    shown = check(v2_58.show_instance_action, _action(
        api, server_id, action['request_id'], token, '2.58'))['instanceAction']
    assert shown['updated_at'] == newer['updated_at']


def test_from_2_62_events_have_a_host_id_for_all_and_the_host_for_admins(api, steady):
    name, token, server_id, action = steady
    for version in ('2.62', '2.69'):
        mine = check(v2_62.show_instance_action, _action(
            api, server_id, action['request_id'], token, version))['instanceAction']
        assert [e['hostId'] for e in mine['events']] == [_host_id(name, STEADY)] * 2
        assert not any('host' in e for e in mine['events'])
        theirs = check(v2_62.show_instance_action, _action(
            api, server_id, action['request_id'], ADMIN, version))['instanceAction']
        assert [e['host'] for e in theirs['events']] == [STEADY, STEADY]
        assert [e['hostId'] for e in theirs['events']] == [_host_id(name, STEADY)] * 2


def test_a_server_that_failed_everywhere_says_on_which_hosts_and_why(api, project):
    name, token = project
    server_id = _boot(api, token, 'flaky', wanted='ERROR')
    (action,) = check(v2_58.list_instance_actions,
                      _actions(api, server_id, token, '2.58'))['instanceActions']
    # The owner: an Error result per attempt, and the action's message (the server's fault).
    mine = check(v2_62.show_instance_action, _action(
        api, server_id, action['request_id'], token, '2.62'))['instanceAction']
    assert [e['result'] for e in mine['events']] == ['Success', 'Error', 'Error']
    assert mine['message'].startswith('Build failed on every host tried')
    # An admin (what `openstack server event show` prints): which host, and why.
    theirs = check(v2_62.show_instance_action, _action(
        api, server_id, action['request_id'], ADMIN, '2.62'))['instanceAction']
    builds = [(e['host'], e['traceback']) for e in theirs['events']
              if e['event'] == 'compute_build_and_run_instance']
    assert sorted(builds) == [(host, _reason(host)) for host in FLAKY]
    assert theirs['events'][0]['host'] in FLAKY
    assert theirs['events'][0]['traceback'] is None


def test_a_server_no_host_could_take_has_its_scheduling_failure_as_an_event(api, project):
    name, token = project
    answer = api.request('POST', '/v2.1/servers', {'server': {
        'name': 'big', 'flavorRef': 'huge', 'imageRef': 'cirros'}}, token=token)
    server_id = answer.json['server']['id']
    api.wait_for_status(server_id, 'ERROR', token=token)
    (action,) = check(v2_58.list_instance_actions,
                      _actions(api, server_id, token, '2.58'))['instanceActions']
    assert action['message'].startswith('NoValidHost')
    shown = check(v2_62.show_instance_action, _action(
        api, server_id, action['request_id'], ADMIN, '2.62'))['instanceAction']
    (event,) = shown['events']
    assert (event['event'], event['result'], event['host'], event['hostId']) == (
        'conductor_schedule_and_build_instances', 'Error', '', '')
    assert 'VCPU:4096' in event['traceback']
    # Once the scheduler's record is stored, the action carries its request id
    # (and still answers to the one it was listed with before).
    record = _record_about(api, server_id)
    assert record['outcome'] == 'no valid host'
    (now,) = _actions(api, server_id, token, '2.58').json['instanceActions']
    assert now['request_id'] == record['request_id']
    for request_id in {action['request_id'], now['request_id']}:
        assert _action(api, server_id, request_id, token, '2.58').status == 200


def test_a_server_still_being_scheduled_has_no_action_yet(api, project):
    _, token = project
    # A build request no super conductor will take: written as the API writes it, never cast.
    engine = api.services.api_engine
    flavor = servers.flavor_payload(flavors.get(engine, 'small'))
    name = project[0]
    instance = Instance(uuid=str(uuidlib.uuid4()), project_id=name, user_id=f'{name}-user',
                        flavor=flavor, display_name='waiting')
    build_requests.record(engine, [instance], RequestSpec(
        flavor=flavor, project_id=name, user_id=f'{name}-user', num_instances=1))
    listed = check(v2_1.list_instance_actions, _actions(api, instance.uuid, token))
    assert listed['instanceActions'] == []


def test_paging_and_time_filters_from_2_58_and_changes_before_from_2_66(api, steady):
    _, token, server_id, action = steady
    first = check(v2_58.list_instance_actions,
                  _actions(api, server_id, token, '2.58', '?limit=1'))
    assert [a['request_id'] for a in first['instanceActions']] == [action['request_id']]
    (link,) = first['links']
    assert link['rel'] == 'next' and f'marker={action["request_id"]}' in link['href']
    after = check(v2_58.list_instance_actions, _actions(
        api, server_id, token, '2.58', f'?limit=1&marker={action["request_id"]}'))
    assert after == {'instanceActions': []}
    future = (datetime.datetime.utcnow() + datetime.timedelta(hours=1)).isoformat()
    past = '2000-01-01T00:00:00Z'
    assert _actions(api, server_id, token, '2.58',
                    f'?changes-since={future}').json['instanceActions'] == []
    assert len(_actions(api, server_id, token, '2.58',
                        f'?changes-since={past}').json['instanceActions']) == 1
    assert _actions(api, server_id, token, '2.66',
                    f'?changes-before={past}').json['instanceActions'] == []
    assert len(_actions(api, server_id, token, '2.66',
                        f'?changes-before={future}').json['instanceActions']) == 1
    # Below 2.58 the query is not looked at, as in Nova.
    assert len(_actions(api, server_id, token, '2.57',
                        '?limit=x').json['instanceActions']) == 1
    for version, query, named in (
            ('2.58', '?changes-before=2000-01-01T00:00:00Z', 'changes-before'),
            ('2.58', '?limit=-1', 'limit'),
            ('2.58', '?marker=req-nothing', 'req-nothing'),
            ('2.58', '?changes-since=yesterday', 'changes-since'),
            ('2.66', f'?changes-since={future}&changes-before={past}', 'changes-since')):
        answer = _actions(api, server_id, token, version, query)
        assert answer.status == 400, (query, answer.text)
        assert named in answer.json['badRequest']['message']


def test_an_unknown_action_is_404(api, steady):
    _, token, server_id, _ = steady
    answer = _action(api, server_id, 'req-nothing', token, '2.1')
    assert answer.status == 404
    assert answer.json['itemNotFound']['message'] == 'Action req-nothing not found'


def test_another_projects_server_is_404_and_a_caller_without_role_is_novas_403(api, steady):
    _, token, server_id, action = steady
    for path in ('', f'/{action["request_id"]}'):
        answer = api.request('GET', f'/v2.1/servers/{server_id}/os-instance-actions{path}',
                             token='someone:elsewhere')
        assert answer.status == 404
        assert answer.json['itemNotFound']['message'] == (
            f'Instance {server_id} could not be found.')
    refused = api.request('GET', f'/v2.1/servers/{server_id}/os-instance-actions',
                          token=token, headers={'X-Roles': 'observer'})
    assert refused.json == {'forbidden': {'code': 403, 'message': (
        "Policy doesn't allow os_compute_api:os-instance-actions:list to be performed.")}}


def test_a_deleted_servers_actions_are_shown_from_2_21(api, project):
    _, token = project
    server_id = _boot(api, token, 'steady')
    assert api.request('DELETE', f'/v2.1/servers/{server_id}', token=token).status == 204
    api.wait_until(lambda: _actions(api, server_id, token, '2.20').status == 404,
                   'the deleted server is 404 below 2.21')
    listed = check(v2_1.list_instance_actions, _actions(api, server_id, token, '2.21'))
    assert [a['action'] for a in listed['instanceActions']] == ['create']


# --- os-scheduling-records ------------------------------------------------------------

_SUMMARY = {
    'type': 'object',
    'properties': {
        'request_id': {'type': 'string'}, 'created_at': {'type': 'string'},
        'project_id': {'type': 'string'},
        'outcome': {'enum': ['selected', 'no valid host', 'error']},
        'error': {'type': ['string', 'null']},
        'instance_uuids': {'type': 'array', 'items': {'type': 'string'}},
        'candidate_hosts': {'type': ['integer', 'null']},
        'selected': {'type': 'array', 'items': {
            'type': 'object', 'properties': {'instance_uuid': {'type': 'string'},
                                             'host': {'type': 'string'}},
            'required': ['instance_uuid', 'host'], 'additionalProperties': False}},
        'total_ms': {'type': 'number'},
        'links': {'type': 'array', 'items': {
            'type': 'object', 'properties': {'rel': {'const': 'self'},
                                             'href': {'type': 'string'}},
            'required': ['rel', 'href'], 'additionalProperties': False}},
    },
    'required': ['request_id', 'created_at', 'project_id', 'outcome', 'error',
                 'instance_uuids', 'candidate_hosts', 'selected', 'total_ms', 'links'],
    'additionalProperties': False,
}
LIST_RECORDS = {'type': 'object',
                'properties': {'scheduling_records': {'type': 'array', 'items': _SUMMARY}},
                'required': ['scheduling_records'], 'additionalProperties': False}


def _records(api, query='', token=ADMIN):
    return api.request('GET', f'/v2.1/os-scheduling-records{query}', token=token)


def _record(api, request_id) -> dict:
    """The record of ``request_id``, once the scheduler's writer has stored it."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        answer = api.request('GET', f'/v2.1/os-scheduling-records/{request_id}', token=ADMIN)
        if answer.status == 200:
            return answer.json['scheduling_record']
        assert answer.status == 404, answer.text
        assert time.monotonic() < deadline, f'no record of {request_id}'
        time.sleep(0.05)


def _record_about(api, server_id) -> dict:
    """The newest record about ``server_id`` in brief, once stored."""
    api.wait_until(lambda: _records(api, f'?instance_uuid={server_id}').json[
        'scheduling_records'], f'a scheduling record about {server_id}')
    return _records(api, f'?instance_uuid={server_id}').json['scheduling_records'][0]


def test_an_admin_reads_the_record_of_a_servers_create_request_whole(api, steady):
    name, _, server_id, action = steady
    record = _record(api, action['request_id'])
    assert record['request_id'] == action['request_id'] and record['project_id'] == name
    (mine,) = record['instances']
    assert mine['instance_uuid'] == server_id
    assert [s['host'] for s in mine['selections'] if s['claimed']] == [STEADY]
    assert {'request', 'placement', 'stage_ms', 'outcome'} <= set(record)


def test_the_newest_records_in_brief_newest_first_found_by_instance(api, steady, project):
    _, _, server_id, action = steady
    _record(api, action['request_id'])
    # A second boot of the test's own, so the list has two records whatever ran before.
    _boot(api, project[1], 'steady')
    listed = _records(api, '?limit=1000').json
    jsonschema.validate(listed, LIST_RECORDS)
    times = [r['created_at'] for r in listed['scheduling_records']]
    assert times == sorted(times, reverse=True) and len(times) >= 2
    (about,) = _records(api, f'?instance_uuid={server_id}').json['scheduling_records']
    assert about['request_id'] == action['request_id'] and about['outcome'] == 'selected'
    assert about['selected'] == [{'instance_uuid': server_id, 'host': STEADY}]
    assert about['links'][0]['href'].endswith(f'/v2.1/os-scheduling-records/'
                                              f'{action["request_id"]}')
    assert len(_records(api, '?limit=1').json['scheduling_records']) == 1
    by_request = _records(api, f'?request_id={action["request_id"]}').json
    assert [r['request_id'] for r in by_request['scheduling_records']] == [action['request_id']]


@pytest.mark.parametrize('query, named', [('?limit=0', 'limit'), ('?limit=1001', 'limit'),
                                          ('?limit=many', 'limit'), ('?host=x', 'host')])
def test_a_bad_records_query_is_400_naming_it(api, query, named):
    answer = _records(api, query)
    assert answer.status == 400 and named in answer.json['badRequest']['message']


def test_records_are_admin_only_and_an_unknown_request_is_404(api, steady):
    _, token, _, action = steady
    for path, rule in (('', 'index'), (f'/{action["request_id"]}', 'show')):
        answer = api.request('GET', f'/v2.1/os-scheduling-records{path}', token=token)
        assert answer.json == {'forbidden': {'code': 403, 'message': (
            f"Policy doesn't allow os_compute_api:os-scheduling-records:{rule} to be "
            f"performed.")}}
    missing = api.request('GET', '/v2.1/os-scheduling-records/req-nothing', token=ADMIN)
    assert missing.status == 404
    assert 'req-nothing' in missing.json['itemNotFound']['message']
