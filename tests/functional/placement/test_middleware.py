"""The middleware around the API: the health check and CORS (oslo.middleware)."""
from __future__ import annotations

import pytest

from tests.functional.placement.conftest import placement_conf


@pytest.mark.parametrize('strategy', ['noauth2', 'keystone'])
def test_healthcheck_answers_without_a_token(make_client, strategy):
    c = make_client(conf=placement_conf(api={'auth_strategy': strategy}))
    resp = c.get('/healthcheck', token=None, mv=None, headers={'accept': 'text/plain'})
    assert resp.status_int == 200


@pytest.fixture
def cors_client(make_client):
    """The reference's CORSFixture."""
    return make_client(conf=placement_conf(
        api={'auth_strategy': 'noauth2'},
        cors={'allowed_origin': ['http://valid.example.com'],
              'allow_headers': ['openstack-api-version']}))


def test_cors_preflight_from_an_allowed_origin(cors_client):
    resp = cors_client.request('OPTIONS', '/', token=None, mv=None, headers={
        'origin': 'http://valid.example.com', 'access-control-request-method': 'GET',
        'access-control-request-headers': 'openstack-api-version'})
    assert resp.status_int == 200
    assert resp.headers['access-control-allow-origin'] == 'http://valid.example.com'
    assert resp.headers['access-control-allow-headers'] == 'openstack-api-version'


def test_cors_preflight_needs_no_token_on_an_api_path(cors_client):
    resp = cors_client.request('OPTIONS', '/resource_providers', token=None, mv=None,
                               headers={'origin': 'http://valid.example.com',
                                        'access-control-request-method': 'GET'})
    assert resp.status_int == 200
    assert resp.headers['access-control-allow-origin'] == 'http://valid.example.com'


def test_cors_other_origins_get_no_allow_header(cors_client):
    for method in ('OPTIONS', 'GET'):
        resp = cors_client.request(method, '/', token=None, headers={
            'origin': 'http://invalid.example.com', 'access-control-request-method': 'GET'})
        assert resp.status_int == 200
        assert 'access-control-allow-origin' not in resp.headers


def test_cors_simple_request_gets_the_allow_header(cors_client):
    resp = cors_client.get('/resource_providers', headers={'origin': 'http://valid.example.com'})
    assert resp.status_int == 200
    assert resp.headers['access-control-allow-origin'] == 'http://valid.example.com'


def test_without_allowed_origin_there_is_no_cors(client):
    resp = client.get('/', headers={'origin': 'http://valid.example.com'})
    assert 'access-control-allow-origin' not in resp.headers
