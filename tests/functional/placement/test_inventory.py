"""/resource_providers/{uuid}/inventories[/{resource_class}]."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from placement.db.models import allocations
from placement.objects import resource_class as rc_obj
from tests.functional.placement.conftest import error

DISK = {'total': 2048, 'reserved': 512, 'min_unit': 10, 'max_unit': 1024,
        'step_size': 10, 'allocation_ratio': 1.0}


@pytest.fixture
def rp(client):
    return client.provider('cn1')['uuid']


def _allocate(client, rp_uuid: str, rc_name: str, used: int) -> None:
    """Put an allocation row straight in the table (allocations are not
    this file's subject)."""
    with client.engine.begin() as conn:
        rp_id = conn.execute(sa.text('SELECT id FROM resource_providers WHERE uuid = :u'),
                             {'u': rp_uuid}).scalar()
        conn.execute(allocations.insert().values(
            resource_provider_id=rp_id, consumer_id=str(uuid.uuid4()),
            resource_class_id=rc_obj.STANDARD_IDS[rc_name], used=used))


def test_missing_provider_is_404(client):
    missing = '7260669a-e3d4-4867-aaa7-683e2ab6958c'
    resp = client.get(f'/resource_providers/{missing}/inventories')
    assert resp.status_int == 404
    assert f'No resource provider with uuid {missing} found' in error(resp)['detail']
    assert client.delete(f'/resource_providers/{missing}/inventories').status_int == 404


def test_empty_inventory(client, rp):
    assert client.get(f'/resource_providers/{rp}/inventories').json == {
        'resource_provider_generation': 0, 'inventories': {}}


def test_post_one_class(client, rp):
    resp = client.post(f'/resource_providers/{rp}/inventories',
                       {'resource_class': 'DISK_GB', **DISK})
    assert resp.status_int == 201
    assert resp.headers['Location'] == \
        f'http://localhost/resource_providers/{rp}/inventories/DISK_GB'
    assert resp.json == {**DISK, 'resource_provider_generation': 1}
    got = client.get(f'/resource_providers/{rp}/inventories/DISK_GB', mv='1.15')
    assert got.json == {**DISK, 'resource_provider_generation': 1}
    assert got.headers['Cache-Control'] == 'no-cache'
    assert 'Cache-Control' not in client.get(
        f'/resource_providers/{rp}/inventories/DISK_GB', mv='1.14').headers


def test_defaults(client, rp):
    resp = client.post(f'/resource_providers/{rp}/inventories',
                       {'resource_class': 'VCPU', 'total': 8})
    assert resp.json == {'total': 8, 'reserved': 0, 'min_unit': 1,
                         'max_unit': 2147483647, 'step_size': 1,
                         'allocation_ratio': 1.0, 'resource_provider_generation': 1}


def test_post_existing_class_is_409(client, rp):
    client.post(f'/resource_providers/{rp}/inventories', {'resource_class': 'VCPU', 'total': 8})
    resp = client.post(f'/resource_providers/{rp}/inventories',
                       {'resource_class': 'VCPU', 'total': 8})
    assert resp.status_int == 409
    assert 'Update conflict' in error(resp)['detail']


@pytest.mark.parametrize('body, message', [
    ({'resource_class': 'DISK_GB'}, "'total' is a required property"),
    ({'resource_class': 'DISK_GB', 'total': -1}, '-1 is less than the minimum of 1'),
    ({'resource_class': 'DISK_GB', 'total': 0}, '0 is less than the minimum of 1'),
    ({'resource_class': 'DISK_GB', 'total': 10, 'reserved': -1}, 'less than the minimum'),
    ({'resource_class': 'DISK_GB', 'total': 10, 'min_unit': 0},
     "Failed validating 'minimum' in schema['properties']['min_unit']"),
    ({'resource_class': 'DISK_GB', 'total': 10, 'step_size': 0}, 'less than the minimum'),
    ({'resource_class': 'DISK_GB', 'total': 2147483648}, "Failed validating 'maximum'"),
    ({'resource_class': 'DISK_GB', 'total': 10, 'allocation_ratio': 3.40282e+39},
     "Failed validating 'maximum'"),
    ({'resource_class': 'DISK_GB', 'total': '10'}, "is not of type 'integer'"),
    ({'resource_class': 'DISK_GB', 'total': 1.5}, "is not of type 'integer'"),
    ({'resource_class': 'bad_class', 'total': 10}, 'JSON does not validate'),
    ({'resource_class': 'NO_CLASS_14', 'total': 10}, 'No such resource class NO_CLASS_14'),
    ({'resource_class': 'DISK_GB', 'total': 256, 'reserved': 512},
     'Unable to create inventory for resource provider'),
])
def test_bad_post_is_400(client, rp, body, message):
    resp = client.post(f'/resource_providers/{rp}/inventories', body)
    assert resp.status_int == 400
    assert message in error(resp)['detail']


def test_put_all_replaces_and_bumps_generation(client, rp):
    url = f'/resource_providers/{rp}/inventories'
    resp = client.put(url, {'resource_provider_generation': 0, 'inventories': {
        'IPV4_ADDRESS': {'total': 253}, 'DISK_GB': {'total': 1024}}}, mv='1.15')
    assert resp.status_int == 200
    assert resp.headers['Cache-Control'] == 'no-cache'
    assert resp.json['resource_provider_generation'] == 1
    assert set(resp.json['inventories']) == {'IPV4_ADDRESS', 'DISK_GB'}
    resp = client.put(url, {'resource_provider_generation': 1, 'inventories': {
        'DISK_GB': {'total': 2048, 'reserved': 10}}})
    assert resp.json['resource_provider_generation'] == 2
    assert resp.json['inventories'] == {'DISK_GB': {
        'total': 2048, 'reserved': 10, 'min_unit': 1, 'max_unit': 2147483647,
        'step_size': 1, 'allocation_ratio': 1.0}}
    resp = client.put(url, {'resource_provider_generation': 2, 'inventories': {}}, mv='1.4')
    assert resp.json == {'resource_provider_generation': 3, 'inventories': {}}


def test_put_all_with_stale_generation_is_409(client, rp):
    resp = client.put(f'/resource_providers/{rp}/inventories', {
        'resource_provider_generation': 99, 'inventories': {'VCPU': {'total': 1}}}, mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.concurrent_update'
    assert 'resource provider generation conflict' in error(resp)['detail']


def test_put_all_unknown_class_is_400(client, rp):
    resp = client.put(f'/resource_providers/{rp}/inventories', {
        'resource_provider_generation': 0, 'inventories': {'HOUSE': {'total': 1}}})
    assert resp.status_int == 400
    assert 'Unknown resource class in inventory' in error(resp)['detail']


def test_reserved_equal_to_total_allowed_from_1_26(client, rp):
    url = f'/resource_providers/{rp}/inventories'
    body = {'resource_provider_generation': 0,
            'inventories': {'IPV4_ADDRESS': {'total': 253, 'reserved': 253}}}
    resp = client.put(url, body, mv='1.25')
    assert resp.status_int == 400
    assert 'greater than or equal to total' in error(resp)['detail']
    assert client.put(url, body, mv='1.26').status_int == 200
    body['inventories']['IPV4_ADDRESS']['reserved'] = 254
    body['resource_provider_generation'] = 1
    resp = client.put(url, body, mv='1.26')
    assert resp.status_int == 400
    assert 'The reserved value is greater than total' in error(resp)['detail']


def test_put_one_class(client, rp):
    client.post(f'/resource_providers/{rp}/inventories', {'resource_class': 'DISK_GB', **DISK})
    url = f'/resource_providers/{rp}/inventories/DISK_GB'
    resp = client.put(url, {**DISK, 'reserved': 1024, 'resource_provider_generation': 1})
    assert resp.status_int == 200
    assert resp.json['reserved'] == 1024
    assert resp.json['resource_provider_generation'] == 2
    resp = client.put(url, {'total': 2048, 'resource_provider_generation': 5}, mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.concurrent_update'
    resp = client.put(url, {**DISK, 'reserved': 4096, 'resource_provider_generation': 2})
    assert resp.status_int == 400
    assert f'Unable to update inventory for resource provider {rp}' in error(resp)['detail']
    resp = client.put(f'/resource_providers/{rp}/inventories/MEMORY_MB',
                      {'total': 1, 'resource_provider_generation': 2})
    assert resp.status_int == 400
    assert 'No inventory record with resource class' in error(resp)['detail']
    assert client.put(url, {'house': 'red'}).status_int == 400


def test_delete_one_class(client, rp):
    client.post(f'/resource_providers/{rp}/inventories', {'resource_class': 'IPV4_ADDRESS',
                                                          'total': 255})
    url = f'/resource_providers/{rp}/inventories/IPV4_ADDRESS'
    assert client.delete(url).status_int == 204
    resp = client.delete(url)
    assert resp.status_int == 404
    assert 'No inventory of class IPV4_ADDRESS found for delete' in error(resp)['detail']
    resp = client.get(url)
    assert resp.status_int == 404
    assert f'No inventory of class IPV4_ADDRESS for {rp}' in error(resp)['detail']
    assert client.get(f'/resource_providers/{rp}/inventories/HOUSE').status_int == 404
    assert client.get(f'/resource_providers/{rp}/inventories').json[
        'resource_provider_generation'] == 2


def test_delete_all_needs_1_5_and_bumps_generation_even_when_empty(client, rp):
    url = f'/resource_providers/{rp}/inventories'
    assert client.delete(url, mv='1.4').status_int == 405
    client.put(url, {'resource_provider_generation': 0, 'inventories': {'VCPU': {'total': 2}}})
    assert client.delete(url, mv='1.5').status_int == 204
    assert client.delete(url, mv='1.5').status_int == 204
    assert client.get(url).json == {'resource_provider_generation': 3, 'inventories': {}}


# ------------------------------------------------------- inventory in use

def test_removing_a_class_with_allocations_is_409_inuse(client, rp):
    url = f'/resource_providers/{rp}/inventories'
    client.put(url, {'resource_provider_generation': 0,
                     'inventories': {'VCPU': {'total': 8}, 'DISK_GB': {'total': 100}}})
    _allocate(client, rp, 'VCPU', 2)
    for resp in (
            client.put(url, {'resource_provider_generation': 1,
                             'inventories': {'DISK_GB': {'total': 100}}}, mv='1.23'),
            client.delete(f'{url}/VCPU', mv='1.23'),
            client.delete(url, mv='1.23')):
        assert resp.status_int == 409, resp.text
        assert error(resp)['code'] == 'placement.inventory.inuse'
    _allocate(client, rp, 'DISK_GB', 1)
    resp = client.delete(url)
    assert f"Inventory for 'VCPU, DISK_GB' on resource provider '{rp}' in use" in \
        error(resp)['detail']      # classes in id order, as the reference
    # nothing changed: same generation, same inventory
    assert client.get(url).json['resource_provider_generation'] == 1
    assert set(client.get(url).json['inventories']) == {'VCPU', 'DISK_GB'}


def test_deleting_one_class_in_use_is_inuse_not_concurrent_update(client, rp):
    """A deliberate difference: the reference says placement.concurrent_update
    here, which tells a client to re-read and retry; no retry can succeed
    while the allocations are there (see placement/README.md)."""
    url = f'/resource_providers/{rp}/inventories'
    client.put(url, {'resource_provider_generation': 0,
                     'inventories': {'VCPU': {'total': 8}}})
    _allocate(client, rp, 'VCPU', 2)
    resp = client.delete(f'{url}/VCPU', mv='1.23')
    assert resp.status_int == 409
    assert error(resp)['code'] == 'placement.inventory.inuse'
    assert (f"Unable to delete inventory of class VCPU: Inventory for 'VCPU' on "
            f"resource provider '{rp}' in use.") in error(resp)['detail']


def test_shrinking_below_allocations_is_allowed_as_in_the_reference(client, rp):
    """The reference's with-allocations.yaml: "We can change inventory in a
    way that makes existing allocations exceed the new capacity"."""
    url = f'/resource_providers/{rp}/inventories'
    client.put(url, {'resource_provider_generation': 0,
                     'inventories': {'VCPU': {'total': 8}, 'DISK_GB': {'total': 100}}})
    _allocate(client, rp, 'VCPU', 6)
    resp = client.put(url, {'resource_provider_generation': 1,
                            'inventories': {'VCPU': {'total': 4}, 'DISK_GB': {'total': 100}}})
    assert resp.status_int == 200
    resp = client.put(f'{url}/VCPU', {'total': 2, 'resource_provider_generation': 2})
    assert resp.status_int == 200
    assert client.get(f'/resource_providers/{rp}/usages').json['usages']['VCPU'] == 6


def test_shrinking_below_allocations_can_be_refused(client, rp, monkeypatch):
    from placement.objects import inventory as inv_obj
    monkeypatch.setattr(inv_obj, 'REFUSE_OVER_CAPACITY', True)
    url = f'/resource_providers/{rp}/inventories'
    client.put(url, {'resource_provider_generation': 0,
                     'inventories': {'VCPU': {'total': 8, 'allocation_ratio': 2.0}}})
    _allocate(client, rp, 'VCPU', 10)
    # 8 * 2.0 = 16 >= 10: fine; 4 * 2.0 = 8 < 10: refused; reserved counts too
    assert client.put(f'{url}/VCPU', {'total': 6, 'allocation_ratio': 2.0,
                                      'resource_provider_generation': 1}).status_int == 200
    for body in ({'total': 4, 'allocation_ratio': 2.0},
                 {'total': 8, 'reserved': 4, 'allocation_ratio': 2.0},
                 {'total': 8, 'allocation_ratio': 1.0}):
        resp = client.put(f'{url}/VCPU', {**body, 'resource_provider_generation': 2},
                          mv='1.23')
        assert resp.status_int == 409, body
        assert error(resp)['code'] == 'placement.inventory.inuse'
        resp = client.put(url, {'resource_provider_generation': 2,
                                'inventories': {'VCPU': body}}, mv='1.23')
        assert resp.status_int == 409
        assert error(resp)['code'] == 'placement.inventory.inuse'


def test_a_stale_generation_rolls_back_the_whole_write(client, rp):
    """The generation check is in the same transaction as the change: a
    writer that lost the race leaves nothing behind."""
    from placement import errors
    from placement.context import RequestContext
    from placement.db import api as db_api
    from placement.objects import inventory as inv_obj
    from placement.objects import resource_provider as rp_obj
    ctx = RequestContext(client.engine, None, 'req-test')
    with pytest.raises(errors.Conflict) as caught:
        with db_api.writer(ctx) as conn:
            rp_id, generation = rp_obj.id_and_generation(conn, rp)
            inv_obj.replace_all(conn, rp_id, rp, {
                rc_obj.STANDARD_IDS['VCPU']: inv_obj.with_defaults({'total': 4})},
                {rc_obj.STANDARD_IDS['VCPU']: 'VCPU'})
            rp_obj.bump_generation(conn, rp_id, generation + 1)   # someone else won
    assert caught.value.code == 'placement.concurrent_update'
    assert client.get(f'/resource_providers/{rp}/inventories').json == {
        'resource_provider_generation': 0, 'inventories': {}}


def test_racing_writers_on_postgresql_one_wins_the_rest_409(postgres_url):
    """Eight threads PUT inventory with the same generation at once, each on
    its own connection: exactly one wins; every other gets 409
    concurrent_update (never a 500 from racing on the inventory rows)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from cellplane.db import engines, migrate
    from placement.wsgi import make_app
    from tests.functional.placement.conftest import Client
    engine = engines.create_engine(postgres_url, pool_size=10, max_overflow=0)
    try:
        migrate.sync('placement', engine)
        pg = Client(make_app(engine), engine)
        rp_uuid = pg.provider('racer')['uuid']
        barrier = threading.Barrier(8)

        def write(i):
            barrier.wait()
            return pg.put(f'/resource_providers/{rp_uuid}/inventories', {
                'resource_provider_generation': 0,
                'inventories': {'VCPU': {'total': 10 + i}, 'DISK_GB': {'total': 100}}})
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(write, range(8)))
        statuses = sorted(r.status_int for r in results)
        assert statuses == [200] + [409] * 7, [r.text for r in results]
        assert {error(r)['code'] for r in results if r.status_int == 409} == \
            {'placement.concurrent_update'}
        final = pg.get(f'/resource_providers/{rp_uuid}/inventories').json
        assert final['resource_provider_generation'] == 1
        winner = next(r for r in results if r.status_int == 200)
        assert final['inventories'] == winner.json['inventories']
    finally:
        engine.dispose()
