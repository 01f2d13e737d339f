"""The compute API's middleware: keystonemiddleware, CORS, proxy headers, the request log, metrics.

keystone mode runs keystonemiddleware's own test fixture (it decides which
tokens are valid, as a Keystone would); the rest runs the app
``cellplane-api`` builds, with the options set.
"""
from __future__ import annotations

import logging

import prometheus_client
import pytest
from keystonemiddleware import fixture as ksm_fixture

from cellplane.objects import flavors
from tests.functional.compute_api.harness import ComputeCloud

KEYSTONE = 'http://keystone.invalid/v3'


@pytest.fixture(scope='module')
def api(tmp_path_factory):
    cloud = ComputeCloud(tmp_path_factory.mktemp('compute-api'), cells=1, hosts_per_cell=1)
    flavors.create(cloud.services.api_engine, name='small', vcpus=1, memory_mb=128,
                   flavorid='small')
    yield cloud
    cloud.stop()


@pytest.fixture
def keystone(api):
    fixture = ksm_fixture.AuthTokenFixture()
    fixture.setUp()
    app = api.make_app(api={'auth_strategy': 'keystone'},
                       keystone_authtoken={'www_authenticate_uri': KEYSTONE})
    yield fixture, app
    fixture.cleanUp()


def test_keystone_refuses_a_missing_or_unknown_token_and_names_where_to_get_one(api, keystone):
    _, app = keystone
    assert api.request('GET', '/v2.1/flavors', token=None, app=app).status == 401
    answer = api.request('GET', '/v2.1/flavors', token='not-a-keystone-token', app=app)
    assert answer.status == 401
    assert answer.headers['WWW-Authenticate'] == f'Keystone uri="{KEYSTONE}"'
    assert api.request('GET', '/', token=None, app=app).status == 200
    assert api.request('GET', '/v2.1', token=None, app=app).status == 200


def test_keystone_token_roles_and_project_are_what_the_api_judges(api, keystone):
    fixture, app = keystone
    fixture.add_token_data(token_id='tok-member', user_id='u1', project_id='p-ks',
                           role_list=['member', 'reader'])
    fixture.add_token_data(token_id='tok-admin', user_id='root', project_id='admin-p',
                           role_list=['admin', 'member', 'reader'])
    body = {'flavor': {'name': 'ks', 'id': 'ks', 'ram': 128, 'vcpus': 1, 'disk': 1}}
    assert api.request('POST', '/v2.1/flavors', body, token='tok-member', app=app).status == 403
    # Identity headers a client sends itself are dropped by keystonemiddleware.
    assert api.request('POST', '/v2.1/flavors', body, token='tok-member', app=app,
                       headers={'X-Roles': 'admin'}).status == 403
    assert api.request('POST', '/v2.1/flavors', body, token='tok-admin', app=app).status == 200
    booted = api.request('POST', '/v2.1/servers',
                         {'server': {'name': 'ks-server', 'flavorRef': 'small'}},
                         token='tok-member', app=app)
    assert booted.status == 202, booted.text
    shown = api.request('GET', f'/v2.1/servers/{booted.json["server"]["id"]}',
                        token='tok-member', app=app).json['server']
    assert (shown['tenant_id'], shown['user_id']) == ('p-ks', 'u1')


def test_cors_preflight_is_answered_for_an_allowed_origin_only(api):
    app = api.make_app(cors={'allowed_origin': ['https://dashboard.example']})
    allowed = api.request('OPTIONS', '/v2.1/servers', token=None, app=app, headers={
        'Origin': 'https://dashboard.example', 'Access-Control-Request-Method': 'GET'})
    assert allowed.status == 200
    assert allowed.headers['Access-Control-Allow-Origin'] == 'https://dashboard.example'
    other = api.request('GET', '/v2.1/flavors', app=app,
                        headers={'Origin': 'https://elsewhere.example'})
    assert other.status == 200
    assert 'Access-Control-Allow-Origin' not in other.headers


def test_links_follow_the_scheme_and_host_a_proxy_saw_when_asked_to(api):
    headers = {'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'compute.example'}
    plain = api.request('GET', '/v2.1/flavors/small', headers=headers).json
    assert plain['flavor']['links'][0]['href'] == 'http://localhost/v2.1/flavors/small'
    app = api.make_app(oslo_middleware={'enable_proxy_headers_parsing': True})
    proxied = api.request('GET', '/v2.1/flavors/small', headers=headers, app=app).json
    assert proxied['flavor']['links'][0]['href'] == 'https://compute.example/v2.1/flavors/small'


def test_each_request_is_logged_once_with_its_status_version_and_id(api, caplog):
    caplog.set_level(logging.INFO, logger='cellplane_api.requestlog')
    answer = api.request('GET', '/v2.1/flavors/nope')
    lines = [r.getMessage() for r in caplog.records if r.name == 'cellplane_api.requestlog']
    request_id = answer.headers['x-openstack-request-id']
    assert lines == [f'- "GET /v2.1/flavors/nope" status: 404 len: {len(answer.text)} '
                     f'microversion: 2.1 time: {lines[0].split("time: ")[1].split()[0]} '
                     f'request_id: {request_id}']


def test_requests_are_counted_by_route_template_and_status(api):
    app = api.make_app()

    def count(route, status):
        return prometheus_client.REGISTRY.get_sample_value(
            'cellplane_api_requests_total',
            {'method': 'GET', 'route': route, 'status': status}) or 0
    before = (count('/flavors/{flavor_id}', '200'), count('/flavors/{flavor_id}', '404'))
    api.request('GET', '/v2.1/flavors/small', app=app)
    api.request('GET', '/v2.1/flavors/nope', app=app)
    api.request('GET', '/v2.1/flavors/nope', app=app)
    assert (count('/flavors/{flavor_id}', '200'), count('/flavors/{flavor_id}', '404')) == (
        before[0] + 1, before[1] + 2)


def test_every_answer_has_its_own_request_id_as_novas_do(api):
    callers = 'req-11111111-2222-3333-4444-555555555555'
    answer = api.request('GET', '/v2.1/flavors', headers={'X-OpenStack-Request-ID': callers})
    own = answer.headers['x-openstack-request-id']
    assert own.startswith('req-') and own != callers
    assert answer.headers['x-compute-request-id'] == own
    assert api.request('GET', '/v2.1/flavors').headers['x-openstack-request-id'] != own
