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


def _first_inventories(api, providers: dict) -> dict:
    """A reshape body giving each provider (at generation 0) its inventory, with no allocations."""
    return {'inventories': {rp: {'resource_provider_generation': 0, 'inventories': inv}
                            for rp, inv in providers.items()},
            'allocations': {}}


NEW_HOST = {'VCPU': {'total': 16, 'allocation_ratio': 4.0},
            'MEMORY_MB': {'total': 65536, 'reserved': 512}, 'DISK_GB': {'total': 1000}}


def test_new_providers_first_inventories_are_those_a_put_of_each_would_write(api):
    # A hollow agent's new hosts: many providers with no inventory yet, in one reshape.
    new = [api.provider(f'new-{i}') for i in range(3)]
    empty = api.provider('new-empty')
    body = _first_inventories(api, {**{rp: NEW_HOST for rp in new}, empty: {}})
    assert api.post('/reshaper', body).status == 204
    by_put = api.provider('by-put', inventory=NEW_HOST)
    wanted = api.get(f'/resource_providers/{by_put}/inventories').json['inventories']
    for rp in new:
        assert api.get(f'/resource_providers/{rp}/inventories').json['inventories'] == wanted
        # As the reference: interim and final inventory, two bumps.
        assert _generation(api, rp) == 2
    # The interim step skips an empty inventory; the generation check bumps it once.
    assert _generation(api, empty) == 1
    assert api.get(f'/resource_providers/{empty}/inventories').json['inventories'] == {}


def test_new_providers_with_an_unknown_class_among_them_get_nothing(api):
    first, second = api.provider('new-1'), api.provider('new-2')
    body = _first_inventories(api, {first: NEW_HOST,
                                    second: {'DISK_OF_STEEL': {'total': 10}}})
    result = api.post('/reshaper', body)
    assert result.status == 400
    assert 'No such resource class DISK_OF_STEEL' in result.error['detail']
    for rp in (first, second):
        assert _generation(api, rp) == 0
        assert api.get(f'/resource_providers/{rp}/inventories').json['inventories'] == {}


def test_a_provider_holding_inventory_among_new_ones_is_reshaped_as_any(api):
    new = api.provider('new-1')
    held = api.provider('held', inventory={'VCPU': 8, 'DISK_GB': 100})
    body = _first_inventories(api, {new: NEW_HOST, held: {'VCPU': {'total': 4}}})
    body['inventories'][held]['resource_provider_generation'] = _generation(api, held)
    assert api.post('/reshaper', body).status == 204
    assert set(api.get(f'/resource_providers/{held}/inventories').json['inventories']) == {
        'VCPU'}
    assert (_generation(api, new), _generation(api, held)) == (2, 3)
    assert set(api.get(f'/resource_providers/{new}/inventories').json['inventories']) == set(
        NEW_HOST)
