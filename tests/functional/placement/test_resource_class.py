"""/resource_classes: the standard list, CUSTOM_* create, rename, delete."""
from __future__ import annotations

import os_resource_classes
import pytest
import sqlalchemy as sa

from placement.db.models import resource_classes
from tests.functional.placement.conftest import error


def test_standard_classes_are_listed_with_their_fixed_ids(client):
    resp = client.get('/resource_classes')
    assert resp.status_int == 200
    names = [rc['name'] for rc in resp.json['resource_classes']]
    assert names == list(os_resource_classes.STANDARDS)
    assert resp.json['resource_classes'][0]['links'] == [
        {'rel': 'self', 'href': '/resource_classes/VCPU'}]
    with client.engine.connect() as conn:
        ids = dict(conn.execute(sa.select(resource_classes.c.name,
                                          resource_classes.c.id)).all())
    assert all(ids[name] == i for i, name in enumerate(os_resource_classes.STANDARDS))


def test_resource_classes_need_1_2(client):
    assert client.get('/resource_classes', mv='1.1').status_int == 404
    resp = client.post('/resource_classes', {'name': 'CUSTOM_X'}, mv='1.1')
    assert resp.status_int == 404
    resp = client.post('/resource_classes', raw='data', content_type='text/plain', mv='1.1')
    assert resp.status_int == 404   # 404 before 415


def test_create_custom_class(client):
    resp = client.post('/resource_classes', {'name': 'CUSTOM_IRON_NFV'})
    assert resp.status_int == 201
    assert resp.headers['Location'].endswith('/resource_classes/CUSTOM_IRON_NFV')
    assert 'Content-Type' not in resp.headers
    assert client.get('/resource_classes/CUSTOM_IRON_NFV').json == {
        'name': 'CUSTOM_IRON_NFV',
        'links': [{'rel': 'self', 'href': '/resource_classes/CUSTOM_IRON_NFV'}]}
    assert len(client.get('/resource_classes').json['resource_classes']) == \
        len(os_resource_classes.STANDARDS) + 1
    with client.engine.connect() as conn:
        rc_id = conn.execute(sa.select(resource_classes.c.id).where(
            resource_classes.c.name == 'CUSTOM_IRON_NFV')).scalar()
    assert rc_id >= 10000


def test_create_twice_is_409(client):
    client.post('/resource_classes', {'name': 'CUSTOM_X'})
    resp = client.post('/resource_classes', {'name': 'CUSTOM_X'})
    assert resp.status_int == 409
    assert 'Conflicting resource class already exists' in error(resp)['detail']


def test_create_twice_has_no_error_code_as_the_reference(client):
    # The reference's placement.duplicate_name is for provider names only.
    client.post('/resource_classes', {'name': 'CUSTOM_X'})
    resp = client.post('/resource_classes', {'name': 'CUSTOM_X'}, mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.undefined_code'


@pytest.mark.parametrize('body, message', [
    ({'name': 'IRON_NFV'}, "Failed validating 'pattern'"),
    ({'name': 'CUSTOM_Illegal&@!Name?'}, 'JSON does not validate'),
    ({'name': 'CUSTOM_' + 'S' * 249}, "Failed validating 'maxLength'"),
    ({'name': 'CUSTOM_X', 'additional': 1}, 'Additional properties are not allowed'),
    ({'name': 3}, 'JSON does not validate'),
])
def test_bad_names_are_400(client, body, message):
    resp = client.post('/resource_classes', body)
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_wrong_content_type_is_415(client):
    resp = client.post('/resource_classes', raw='data', content_type='text/plain', mv='1.2')
    assert resp.status_int == 415


def test_rename_custom_class_up_to_1_6(client):
    client.post('/resource_classes', {'name': 'CUSTOM_A'})
    resp = client.put('/resource_classes/CUSTOM_A', {'name': 'CUSTOM_B'}, mv='1.6')
    assert resp.status_int == 200
    assert resp.json['name'] == 'CUSTOM_B'
    assert client.get('/resource_classes/CUSTOM_A').status_int == 404


def test_rename_refusals(client):
    client.post('/resource_classes', {'name': 'CUSTOM_A'})
    client.post('/resource_classes', {'name': 'CUSTOM_B'})
    resp = client.put('/resource_classes/VCPU', {'name': 'CUSTOM_C'}, mv='1.6')
    assert resp.status_int == 400
    assert 'Cannot update standard resource class VCPU' in error(resp)['detail']
    resp = client.put('/resource_classes/CUSTOM_A', {'name': 'CUSTOM_B'}, mv='1.6')
    assert resp.status_int == 409
    assert client.put('/resource_classes/CUSTOM_A', {'name': 'VCPU'}, mv='1.6').status_int == 400
    resp = client.put('/resource_classes/CUSTOM_COW', raw='', content_type='application/json',
                      mv='1.6')
    assert resp.status_int == 400
    assert 'Malformed JSON' in error(resp)['detail']


def test_bodiless_put_creates_from_1_7(client):
    resp = client.put('/resource_classes/CUSTOM_COW', mv='1.7')
    assert resp.status_int == 201
    assert resp.headers['Location'].endswith('/resource_classes/CUSTOM_COW')
    assert client.put('/resource_classes/CUSTOM_COW', mv='1.7').status_int == 204
    for bad in ('COW', 'VCPU', 'CUSTOM_' + 'S' * 260):
        assert client.put(f'/resource_classes/{bad}', mv='1.7').status_int == 400


def test_delete(client):
    client.post('/resource_classes', {'name': 'CUSTOM_A'})
    assert client.delete('/resource_classes/CUSTOM_A').status_int == 204
    assert client.delete('/resource_classes/CUSTOM_A').status_int == 404
    resp = client.delete('/resource_classes/VCPU')
    assert resp.status_int == 400
    assert 'Cannot delete standard resource class' in error(resp)['detail']


def test_delete_class_in_use_by_inventory_is_409(client):
    client.put('/resource_classes/CUSTOM_GOLD')
    rp = client.provider('cn1')
    client.put(f'/resource_providers/{rp["uuid"]}/inventories', {
        'resource_provider_generation': 0, 'inventories': {'CUSTOM_GOLD': {'total': 5}}})
    resp = client.delete('/resource_classes/CUSTOM_GOLD')
    assert resp.status_int == 409
    assert 'Class is in use in inventory' in error(resp)['detail']


def test_cache_headers(client):
    client.put('/resource_classes/CUSTOM_A')
    for url in ('/resource_classes', '/resource_classes/VCPU', '/resource_classes/CUSTOM_A'):
        assert client.get(url, mv='1.15').headers['Cache-Control'] == 'no-cache'
        assert 'Last-Modified' not in client.get(url, mv='1.14').headers
    created = client.put('/resource_classes/CUSTOM_B', mv='1.15')
    assert 'Last-Modified' not in created.headers
