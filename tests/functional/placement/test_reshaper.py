"""POST /reshaper: move VCPU inventory and its allocations to a child, atomically."""
from __future__ import annotations

import pytest

C1 = '11111111-1111-4111-8111-111111111111'
C2 = '22222222-2222-4222-8222-222222222222'


@pytest.fixture
def host(api):
    parent = api.provider('cn1', inventory={'VCPU': 8, 'MEMORY_MB': 4096})
    child = api.provider('numa0', parent=parent)
    for consumer in (C1, C2):
        assert api.claim(consumer, {parent: {'VCPU': 2, 'MEMORY_MB': 512}}).status == 204
    return api, parent, child


def _generation(api, rp):
    return api.get(f'/resource_providers/{rp}').json['generation']


def _move_body(api, parent, child, vcpu_total=8, child_gen=None, parent_gen=None):
    return {
        'inventories': {
            parent: {'resource_provider_generation':
                     _generation(api, parent) if parent_gen is None else parent_gen,
                     'inventories': {'MEMORY_MB': {'total': 4096}}},
            child: {'resource_provider_generation':
                    _generation(api, child) if child_gen is None else child_gen,
                    'inventories': {'VCPU': {'total': vcpu_total}}},
        },
        'allocations': {
            c: {'allocations': {parent: {'resources': {'MEMORY_MB': 512}},
                                child: {'resources': {'VCPU': 2}}},
                'project_id': 'proj', 'user_id': 'user', 'consumer_generation': 1,
                'consumer_type': 'INSTANCE'} for c in (C1, C2)},
    }


def test_move_inventory_and_allocations_to_a_child(host):
    api, parent, child = host
    before = (_generation(api, parent), _generation(api, child))
    assert api.post('/reshaper', _move_body(api, parent, child)).status == 204
    assert api.get(f'/resource_providers/{parent}/usages').json['usages'] == {'MEMORY_MB': 1024}
    assert api.get(f'/resource_providers/{child}/usages').json['usages'] == {'VCPU': 4}
    assert set(api.get(f'/resource_providers/{parent}/inventories').json['inventories']) == {
        'MEMORY_MB'}
    # As the reference: interim inventory, allocations, final inventory.
    assert (_generation(api, parent), _generation(api, child)) == (before[0] + 3, before[1] + 3)
    assert api.get(f'/allocations/{C1}').json['consumer_generation'] == 2


def test_removing_allocated_inventory_without_moving_it_is_409(host):
    api, parent, child = host
    body = {'inventories': {parent: {'resource_provider_generation': _generation(api, parent),
                                     'inventories': {'MEMORY_MB': {'total': 4096}}}},
            'allocations': {}}
    result = api.post('/reshaper', body)
    assert result.status == 409
    assert result.error['code'] == 'placement.inventory.inuse'
    assert api.get(f'/resource_providers/{parent}/usages').json['usages']['VCPU'] == 4


def test_refusals_change_nothing(host):
    api, parent, child = host
    gens = (_generation(api, parent), _generation(api, child))
    stale = api.post('/reshaper', _move_body(api, parent, child, parent_gen=gens[0] - 1))
    assert stale.status == 409
    assert f'actual: {gens[0]}, given: {gens[0] - 1}' in stale.error['detail']
    too_small = api.post('/reshaper', _move_body(api, parent, child, vcpu_total=3))
    assert too_small.status == 409
    assert 'Unable to allocate inventory' in too_small.error['detail']
    assert (_generation(api, parent), _generation(api, child)) == gens
    assert api.get(f'/resource_providers/{child}/inventories').json['inventories'] == {}


def test_unknown_provider_and_class_are_400(host):
    api, parent, child = host
    body = _move_body(api, parent, child)
    body['inventories']['cb8a3007-b93a-471f-9e1f-4d58355678bd'] = \
        body['inventories'].pop(child)
    result = api.post('/reshaper', body)
    assert result.status == 400
    assert result.error['code'] == 'placement.resource_provider.not_found'
    body = _move_body(api, parent, child)
    body['inventories'][child]['inventories'] = {'DISK_OF_STEEL': {'total': 10}}
    result = api.post('/reshaper', body)
    assert result.status == 400
    assert 'No such resource class DISK_OF_STEEL' in result.error['detail']


def test_absent_before_1_30(host):
    api, parent, child = host
    assert api.post('/reshaper', _move_body(api, parent, child), mv='1.29').status == 404
