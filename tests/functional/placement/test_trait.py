"""/traits and /resource_providers/{uuid}/traits."""
from __future__ import annotations

import os_traits
import pytest

from tests.functional.placement.conftest import error

INVALID_TRAIT = 'The trait is invalid.'


def test_traits_need_1_6(client):
    for method in ('GET', 'PUT', 'DELETE'):
        assert client.request(method, '/traits/CUSTOM_T', mv='1.5').status_int == 404
    assert client.get('/traits', mv='1.5').status_int == 404


def test_standard_traits_are_all_there(client):
    listed = set(client.get('/traits').json['traits'])
    assert listed == set(os_traits.get_traits())


def test_create_get_delete_custom_trait(client):
    resp = client.put('/traits/CUSTOM_TRAIT_1', mv='1.6')
    assert resp.status_int == 201
    assert resp.headers['Location'].endswith('/traits/CUSTOM_TRAIT_1')
    assert 'Content-Type' not in resp.headers
    assert client.put('/traits/CUSTOM_TRAIT_1', mv='1.6').status_int == 204
    assert client.get('/traits/CUSTOM_TRAIT_1').status_int == 204
    assert client.delete('/traits/CUSTOM_TRAIT_1').status_int == 204
    assert client.get('/traits/CUSTOM_TRAIT_1').status_int == 404
    assert client.delete('/traits/CUSTOM_TRAIT_1').status_int == 404


@pytest.mark.parametrize('name', ['TRAIT_X', 'CUSTOM_ABC:1', 'CUSTOM_lower',
                                  'CUSTOM_' + 'A' * 249])
def test_invalid_custom_trait_names_are_400(client, name):
    resp = client.put(f'/traits/{name}')
    assert resp.status_int == 400
    assert INVALID_TRAIT in error(resp)['detail']


def test_standard_trait_cannot_be_deleted(client):
    resp = client.delete('/traits/HW_CPU_X86_SSE')
    assert resp.status_int == 400
    assert 'Cannot delete standard trait' in error(resp)['detail']


def test_list_filters(client):
    for name in ('CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2', 'CUSTOM_ANOTHER'):
        client.put(f'/traits/{name}')
    assert client.get('/traits?name=in:CUSTOM_TRAIT_1,CUSTOM_TRAIT_2').json['traits'] == [
        'CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2']
    assert client.get('/traits?name=startswith:CUSTOM_TRAIT').json['traits'] == [
        'CUSTOM_TRAIT_1', 'CUSTOM_TRAIT_2']
    rp = client.provider('cn1')
    client.put(f'/resource_providers/{rp["uuid"]}/traits',
               {'resource_provider_generation': 0, 'traits': ['CUSTOM_ANOTHER']})
    assert client.get('/traits?associated=true').json['traits'] == ['CUSTOM_ANOTHER']
    assert 'CUSTOM_ANOTHER' not in client.get('/traits?associated=false').json['traits']


@pytest.mark.parametrize('query, message', [
    ('name=in_abc', 'Badly formatted name parameter'),
    ('associated=xyz', 'only accepts "true" or "false"'),
    ('invalid=abc', 'Invalid query string parameters: Additional properties are not allowed'),
])
def test_bad_list_queries_are_400(client, query, message):
    resp = client.get(f'/traits?{query}')
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_provider_traits_replace_and_bump_generation(client):
    client.put('/traits/CUSTOM_TRAIT_1')
    rp = client.provider('cn1')
    url = f'/resource_providers/{rp["uuid"]}/traits'
    assert client.get(url).json == {'traits': [], 'resource_provider_generation': 0}
    resp = client.put(url, {'resource_provider_generation': 0,
                            'traits': ['CUSTOM_TRAIT_1', 'HW_CPU_X86_SSE']})
    assert resp.status_int == 200
    assert resp.json == {'traits': ['CUSTOM_TRAIT_1', 'HW_CPU_X86_SSE'],
                         'resource_provider_generation': 1}
    resp = client.put(url, {'resource_provider_generation': 1, 'traits': ['HW_CPU_X86_SSE']})
    assert resp.json == {'traits': ['HW_CPU_X86_SSE'], 'resource_provider_generation': 2}
    assert client.delete(url).status_int == 204
    assert client.get(url).json == {'traits': [], 'resource_provider_generation': 3}


def test_stale_generation_is_409_concurrent_update(client):
    rp = client.provider('cn1')
    url = f'/resource_providers/{rp["uuid"]}/traits'
    resp = client.put(url, {'resource_provider_generation': 5, 'traits': []}, mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.concurrent_update'
    assert "Resource provider's generation already changed" in error(resp)['detail']


@pytest.mark.parametrize('body, message', [
    ({'traits': ['HW_CPU_X86_SSE']}, "'resource_provider_generation' is a required property"),
    ({'traits': [], 'resource_provider_generation': 'x'}, "'x' is not of type 'integer'"),
    ({'traits': 'nope', 'resource_provider_generation': 0}, "'nope' is not of type 'array'"),
    ({'traits': [], 'resource_provider_generation': 0, 'extra': 1}, 'Additional properties'),
    ({'traits': ['NO_SUCH_1', 'NO_SUCH_2'], 'resource_provider_generation': 0},
     'No such trait(s): NO_SUCH_1, NO_SUCH_2'),
])
def test_bad_provider_trait_bodies_are_400(client, body, message):
    rp = client.provider('cn1')
    resp = client.put(f'/resource_providers/{rp["uuid"]}/traits', body)
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_provider_traits_of_missing_provider_are_404(client):
    for method, body in (('GET', None), ('DELETE', None),
                         ('PUT', {'traits': [], 'resource_provider_generation': 0})):
        resp = client.request(method, '/resource_providers/non_existed/traits', body)
        assert resp.status_int == 404
        assert 'No resource provider with uuid non_existed found' in error(resp)['detail']


def test_trait_in_use_cannot_be_deleted(client):
    client.put('/traits/CUSTOM_USED')
    rp = client.provider('cn1')
    client.put(f'/resource_providers/{rp["uuid"]}/traits',
               {'resource_provider_generation': 0, 'traits': ['CUSTOM_USED']})
    resp = client.delete('/traits/CUSTOM_USED')
    assert resp.status_int == 409
    assert 'The trait CUSTOM_USED is in use by a resource provider.' in error(resp)['detail']


def test_cache_headers(client):
    client.put('/traits/CUSTOM_T')
    rp = client.provider('cn1')
    for url in ('/traits', '/traits/CUSTOM_T', f'/resource_providers/{rp["uuid"]}/traits'):
        assert client.get(url, mv='1.15').headers['Cache-Control'] == 'no-cache'
        assert 'Cache-Control' not in client.get(url, mv='1.14').headers
    assert 'Last-Modified' in client.put('/traits/CUSTOM_T', mv='1.15').headers
    assert 'Last-Modified' not in client.delete('/traits/CUSTOM_T', mv='1.15').headers


def test_creating_a_trait_at_1_15_carries_the_cache_headers(client):
    resp = client.put('/traits/CUSTOM_NEW', mv='1.15')
    assert resp.status_int == 201
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert resp.headers['Last-Modified'].endswith(' GMT')
    resp = client.put('/traits/CUSTOM_NEWER', mv='1.14')
    assert resp.status_int == 201
    assert 'Last-Modified' not in resp.headers and 'Cache-Control' not in resp.headers
