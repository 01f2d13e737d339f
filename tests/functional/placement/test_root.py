"""GET / (version discovery) and microversion negotiation."""
from __future__ import annotations

import re

import pytest

from tests.functional.placement.conftest import error

HTTP_DATE = re.compile(r'^\w+, \d+ \w+ \d{4} [\d:]+ GMT$')


def test_root_lists_the_one_version_with_its_microversion_range(client):
    resp = client.get('/', token=None)
    assert resp.status_int == 200
    assert resp.json == {'versions': [{
        'id': 'v1.0', 'min_version': '1.0', 'max_version': '1.39',
        'status': 'CURRENT', 'links': [{'rel': 'self', 'href': ''}]}]}


def test_no_header_means_1_0(client):
    resp = client.get('/', mv=None)
    assert resp.headers['OpenStack-API-Version'] == 'placement 1.0'
    assert 'openstack-api-version' in resp.headers['Vary']


@pytest.mark.parametrize('asked, answered', [
    ('latest', 'placement 1.39'), ('1.39', 'placement 1.39'),
    ('1.14', 'placement 1.14'), ('1.0', 'placement 1.0')])
def test_negotiated_version_is_echoed(client, asked, answered):
    assert client.get('/', mv=asked).headers['OpenStack-API-Version'] == answered


def test_another_services_version_is_ignored(client):
    resp = client.get('/', mv=None,
                      headers={'OpenStack-API-Version': 'compute 2.60'})
    assert resp.headers['OpenStack-API-Version'] == 'placement 1.0'


@pytest.mark.parametrize('version', ['0.5', '1.40', '2.0', '1.999'])
def test_unsupported_version_is_406_with_the_range(client, version):
    resp = client.get('/', mv=version)
    assert resp.status_int == 406
    assert resp.content_type == 'application/json'
    err = error(resp)
    assert err['title'] == 'Not Acceptable'
    assert f'Unacceptable version header: {version}' in err['detail']
    assert (err['min_version'], err['max_version']) == ('1.0', '1.39')


def test_unsupported_version_with_html_accept_answers_html(client):
    resp = client.get('/', mv='0.5', headers={'Accept': 'text/html'})
    assert resp.status_int == 406
    assert resp.content_type == 'text/html'
    assert 'Unacceptable version header: 0.5' in resp.text


@pytest.mark.parametrize('version', ['pony.horse', '1.2.3', '1', 'latestish', '1.x'])
def test_malformed_version_is_400(client, version):
    resp = client.get('/', mv=None,
                      headers={'OpenStack-API-Version': f'placement {version}'})
    assert resp.status_int == 400, resp.text
    assert error(resp)['title'] == 'Bad Request'
    assert 'invalid version string' in error(resp)['detail']


def test_bad_version_on_an_api_route_is_also_refused(client):
    assert client.get('/resource_providers', mv='1.40').status_int == 406
    assert client.get('/resource_providers', mv='one.two').status_int == 400


def test_cache_headers_from_1_15(client):
    resp = client.get('/', mv='1.15')
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert HTTP_DATE.match(resp.headers['Last-Modified'])
    old = client.get('/', mv='1.14')
    assert 'Last-Modified' not in old.headers
    assert 'Cache-Control' not in old.headers


def test_feature_gated_routes_404_below_their_version(client):
    assert client.get('/resource_classes', mv='1.1').status_int == 404
    assert client.get('/traits', mv='1.5').status_int == 404
    assert client.get('/traits', mv='1.6').status_int == 200


def test_root_ignores_accept_as_the_reference(client):
    assert client.get('/', headers={'Accept': 'text/plain'}).status_int == 200
