"""HTTP basics: 404/405, error bodies, Accept and Content-Type handling, and
bad input that must never become a 500."""
from __future__ import annotations

import json
import uuid

import pytest

from tests.functional.placement.conftest import error


def test_unknown_url_is_404_json_with_request_id_and_default_code(client):
    resp = client.get('/barnabas', mv='1.23')
    assert resp.status_int == 404
    assert resp.content_type == 'application/json'
    err = error(resp)
    assert err['status'] == 404
    assert err['title'] == 'Not Found'
    assert err['code'] == 'placement.undefined_code'
    assert err['request_id'].startswith('req-')
    assert resp.headers['x-openstack-request-id'] == err['request_id']
    assert 'The resource could not be found.' in err['detail']


def test_error_code_only_from_1_23(client):
    assert 'code' not in error(client.get('/barnabas', mv='1.22'))


def test_incoming_request_id_is_kept_when_well_formed(client):
    rid = f'req-{uuid.uuid4()}'
    resp = client.get('/barnabas', headers={'X-Openstack-Request-Id': rid})
    assert error(resp)['request_id'] == rid
    other = client.get('/barnabas', headers={'X-Openstack-Request-Id': 'spoof'})
    assert error(other)['request_id'] != 'spoof'


@pytest.mark.parametrize('method, path, allow', [
    ('DELETE', '/', {'GET'}),
    ('DELETE', '/resource_providers', {'GET', 'POST'}),
    ('OPTIONS', '/resource_providers', {'GET', 'POST'}),
    ('POST', '/resource_providers/0b6f3a3e-5d7c-4a63-9c2f-7f0c1e2d4b5a',
     {'GET', 'PUT', 'DELETE'}),
    ('PATCH', '/traits/CUSTOM_X', {'GET', 'PUT', 'DELETE'}),
])
def test_wrong_method_is_405_with_allow(client, method, path, allow):
    resp = client.request(method, path)
    assert resp.status_int == 405
    assert set(resp.headers['Allow'].split(', ')) == allow
    err = error(resp)
    assert err['title'] == 'Method Not Allowed'
    assert f'The method {method} is not allowed for this resource.' in err['detail']
    assert resp.headers['OpenStack-API-Version'] == 'placement 1.39'


def test_errors_are_plain_text_for_a_plain_text_client(client):
    resp = client.get('/moo', headers={'Accept': 'text/plain'})
    assert resp.status_int == 404
    assert resp.content_type == 'text/plain'
    assert 'The resource could not be found' in resp.text


def test_starred_accept_gets_json_errors(client):
    resp = client.get('/resource_providers/foo', headers={'Accept': '*/*'})
    assert resp.status_int == 404
    assert resp.content_type == 'application/json'


def test_get_with_unacceptable_accept_is_406(client):
    resp = client.get('/resource_providers', headers={'Accept': 'text/plain'})
    assert resp.status_int == 406
    browser = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
    assert client.get('/resource_providers', headers={'Accept': browser}).status_int == 200


def test_post_with_wrong_content_type_is_415(client):
    resp = client.post('/resource_providers', raw='I want a provider',
                       content_type='text/plain')
    assert resp.status_int == 415
    assert 'The media type text/plain is not supported, use application/json' in \
        error(resp)['detail']


def test_body_without_content_type_is_400(client):
    resp = client.post('/resource_providers', raw='{"name": "x"}')
    assert resp.status_int == 400
    assert 'content-type header required' in error(resp)['detail']


def test_put_without_body_or_content_type_is_415(client):
    resp = client.put(f'/resource_providers/{uuid.uuid4()}')
    assert resp.status_int == 415
    assert 'The media type None is not supported' in error(resp)['detail']


def test_non_integer_content_length_is_400(client):
    resp = client.post('/resource_providers', raw='{"name": "x"}',
                       content_type='application/json',
                       headers={'Content-Length': 'hi mom'})
    assert resp.status_int == 400
    assert 'content-length header must be an integer' in error(resp)['detail']


@pytest.mark.parametrize('raw', ['{"foo": }', '{', 'null x', '\xff\xfe', '[1, 2'])
def test_malformed_json_is_400(client, raw):
    resp = client.post('/resource_providers', raw=raw.encode('latin-1'),
                       content_type='application/json')
    assert resp.status_int == 400
    assert 'Malformed JSON' in error(resp)['detail']


BAD_BODIES = [
    ('POST', '/resource_providers', []),
    ('POST', '/resource_providers', 'a string'),
    ('POST', '/resource_providers', {'name': 5}),
    ('POST', '/resource_providers', {'name': None}),
    ('POST', '/resource_providers', {'name': 'x' * 201}),
    ('POST', '/resource_providers', {'name': 'x', 'uuid': 'not-a-uuid'}),
    ('POST', '/resource_providers', {'name': 'x', 'uuid': 12}),
    ('POST', '/resource_providers', {'name': 'x', 'parent_provider_uuid': 'nope'}),
    ('POST', '/resource_classes', {'name': 'CUSTOM_' + 'A' * 250}),
    ('POST', '/resource_classes', {'name': 'custom_lower'}),
    ('POST', '/resource_classes', {}),
    ('PUT', '/resource_classes/CUSTOM_X', {'name': 'CUSTOM_Y'}),
]


@pytest.mark.parametrize('method, path, body', BAD_BODIES)
def test_schema_violations_are_400_never_500(client, method, path, body):
    resp = client.request(method, path, body, mv='1.6' if method == 'PUT' else 'latest')
    assert resp.status_int in (400, 404), resp.text
    assert resp.content_type == 'application/json'


def test_unexpected_exception_becomes_json_500(client, monkeypatch):
    from placement.handlers import root

    def boom(req):
        raise RuntimeError('kaboom')
    client.app.placement.router._static['/'].methods['GET'] = boom
    try:
        resp = client.get('/')
    finally:
        client.app.placement.router._static['/'].methods['GET'] = root.home
    assert resp.status_int == 500
    err = error(resp)
    assert err['title'] == 'Internal Server Error'
    assert 'kaboom' not in json.dumps(err)
    assert 'Traceback' not in resp.text


@pytest.mark.parametrize('raw_path', [b'/resource_providers/\xff\xfe', b'/traits/\xc3\x28',
                                      b'/resource_classes/\x00'])
def test_undecodable_or_nul_paths_are_404(client, raw_path):
    import webob
    req = webob.Request.blank('/', headers={'X-Auth-Token': 'admin'})
    req.environ['PATH_INFO'] = raw_path.decode('latin-1')   # as a WSGI server passes it
    assert req.get_response(client.app).status_int == 404


def test_nul_in_query_is_400(client):
    assert client.get('/resource_providers?name=%00').status_int == 400


@pytest.mark.parametrize('raw', [
    '{"name": "x\\u0000y"}',          # NUL: PostgreSQL cannot store it
    '{"name": "\\ud800"}',            # half a surrogate pair
    '{"name": NaN}', '{"name": "x", "uuid": Infinity}',
])
def test_json_that_no_database_can_store_is_400(client, raw):
    resp = client.post('/resource_providers', raw=raw, content_type='application/json')
    assert resp.status_int == 400
    assert 'Malformed JSON' in error(resp)['detail']


def test_non_finite_allocation_ratio_is_400(client):
    rp = client.provider('cn1')['uuid']
    for value in ('NaN', 'Infinity', '-Infinity'):
        resp = client.post(f'/resource_providers/{rp}/inventories',
                           raw=f'{{"resource_class": "VCPU", "total": 5, '
                               f'"allocation_ratio": {value}}}',
                           content_type='application/json')
        assert resp.status_int == 400


def test_oversized_resource_amount_is_400(client):
    resp = client.get('/resource_providers?resources=VCPU:99999999999999999999')
    assert resp.status_int == 400
    assert 'requires amount <= 2147483647' in error(resp)['detail']
