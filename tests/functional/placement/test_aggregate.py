"""/resource_providers/{uuid}/aggregates (1.1+, generations 1.19+)."""
from __future__ import annotations

import pytest

from tests.functional.placement.conftest import error

AGG1 = 'f918801a-5e54-4bee-9095-09a9d0c786b8'
AGG2 = 'a893eb5c-e2a0-4251-ab26-f71d3b0cfc0b'


@pytest.fixture
def url(client):
    return f'/resource_providers/{client.provider("cn1")["uuid"]}/aggregates'


def test_missing_provider_is_404(client):
    missing = '/resource_providers/6984bb2d-830d-4c8d-ac64-c5a8103664be/aggregates'
    assert client.get(missing).status_int == 404
    assert client.put(missing, []).status_int == 404


def test_needs_1_1(client, url):
    assert client.get(url, mv='1.0').status_int == 404
    assert client.put(url, [AGG1], mv='1.0').status_int == 404


def test_set_and_get_with_generation(client, url):
    assert client.get(url).json == {'aggregates': [], 'resource_provider_generation': 0}
    resp = client.put(url, {'resource_provider_generation': 0, 'aggregates': [AGG1, AGG2]})
    assert resp.status_int == 200
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert resp.json == {'aggregates': [AGG1, AGG2], 'resource_provider_generation': 1}
    got = client.get(url)
    assert sorted(got.json['aggregates']) == sorted([AGG1, AGG2])
    assert got.json['resource_provider_generation'] == 1
    resp = client.put(url, {'resource_provider_generation': 1, 'aggregates': []})
    assert resp.json == {'aggregates': [], 'resource_provider_generation': 2}


def test_stale_generation_is_409(client, url):
    resp = client.put(url, {'resource_provider_generation': 7, 'aggregates': [AGG1]})
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.concurrent_update'


def test_old_format_before_1_19(client, url):
    resp = client.put(url, [AGG1, AGG2], mv='1.18')
    assert resp.status_int == 200
    assert resp.json == {'aggregates': [AGG1, AGG2]}
    assert client.get(url, mv='1.18').json == {'aggregates': [AGG1, AGG2]}
    assert 'Cache-Control' not in client.get(url, mv='1.14').headers
    # no generation, no bump before 1.19
    assert client.get(url).json['resource_provider_generation'] == 0


@pytest.mark.parametrize('mv, body, message', [
    ('latest', [AGG1], 'JSON does not validate'),
    ('1.18', {'resource_provider_generation': 0, 'aggregates': [AGG1]},
     'JSON does not validate'),
    ('latest', {'aggregates': [AGG1]}, "'resource_provider_generation' is a required"),
    ('latest', {'resource_provider_generation': 0, 'aggregates': ['harry']},
     "is not a 'uuid'"),
    ('latest', {'resource_provider_generation': 0, 'aggregates': [AGG1, AGG1]},
     'has non-unique elements'),
])
def test_bad_bodies_are_400(client, url, mv, body, message):
    resp = client.put(url, body, mv=mv)
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_malformed_json_is_400(client, url):
    resp = client.put(url, raw='{"bad", "not json"}', content_type='application/json')
    assert resp.status_int == 400
    assert 'Malformed JSON' in error(resp)['detail']
