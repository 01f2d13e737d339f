"""placement.client in its in-process mode: the same handlers, no socket."""
from __future__ import annotations

import uuid

import pytest

from placement.client import (
    ClaimConflict,
    InProcessTransport,
    Inventory,
    PlacementClient,
    PlacementClientError,
)


class InterleavingTransport(InProcessTransport):
    """Runs ``interloper`` once, right before the first request matching
    ``method path_suffix``: a real write by another party in between the
    client's read and its write."""

    def __init__(self, app, method, path_suffix, interloper):
        super().__init__(app)
        self.trigger = (method, path_suffix)
        self.interloper = interloper
        self.writes = 0

    def request(self, method, path, body=None, microversion='1.39'):
        if method == self.trigger[0] and path.endswith(self.trigger[1]):
            self.writes += 1
            if self.interloper is not None:
                interloper, self.interloper = self.interloper, None
                interloper()
        return super().request(method, path, body, microversion)


@pytest.fixture
def client(api):
    return PlacementClient(InProcessTransport(api.app))


def test_ensure_provider_is_idempotent(client):
    rp = str(uuid.uuid4())
    first = client.ensure_provider(rp, 'host-a')
    again = client.ensure_provider(rp, 'host-a')
    assert first.uuid == again.uuid == rp
    assert again.generation == first.generation
    child = client.ensure_provider(str(uuid.uuid4()), 'host-a-numa0', parent_uuid=rp)
    assert (child.parent_uuid, child.root_uuid) == (rp, rp)


def test_set_inventory_rereads_generation_after_a_concurrent_write(api):
    plain = PlacementClient(InProcessTransport(api.app))
    rp = plain.ensure_provider(str(uuid.uuid4()), 'host-b').uuid

    def concurrent_traits_change():
        plain.set_traits(rp, ['HW_CPU_X86_AVX2'])

    transport = InterleavingTransport(api.app, 'PUT', '/inventories',
                                      concurrent_traits_change)
    client = PlacementClient(transport)
    generation = client.set_inventory(rp, {'VCPU': Inventory(total=8, allocation_ratio=4.0)})
    assert transport.writes == 2          # the first PUT lost, the second won
    assert generation == plain.get_provider(rp).generation == 2
    inv = api.get(f'/resource_providers/{rp}/inventories').json['inventories']
    assert inv['VCPU']['allocation_ratio'] == 4.0
    assert api.get(f'/resource_providers/{rp}/traits').json['traits'] == ['HW_CPU_X86_AVX2']


def test_candidates_claim_unclaim(client):
    rp = client.ensure_provider(str(uuid.uuid4()), 'host-c').uuid
    client.set_inventory(rp, {'VCPU': Inventory(total=4), 'MEMORY_MB': Inventory(total=2048)})
    client.set_traits(rp, ['CUSTOM_GOLD'])
    found = client.get_candidates([('resources', 'MEMORY_MB:1024,VCPU:2'),
                                   ('required', 'CUSTOM_GOLD')])
    assert len(found.allocation_requests) == 1
    cand = found.allocation_requests[0]
    assert list(cand['allocations']) == [rp] and list(found.requests_by_root()) == [rp]
    assert found.provider_summaries[rp].free('VCPU') == 4
    assert 'CUSTOM_GOLD' in found.provider_summaries[rp].traits

    instance = str(uuid.uuid4())
    client.claim(instance, cand['allocations'], project_id='p', user_id='u')
    got = client.get_allocations(instance)
    assert got.allocations == {rp: {'VCPU': 2, 'MEMORY_MB': 1024}}
    assert got.generation == 1
    assert client.get_candidates([('resources', 'VCPU:2'),
                                  ('required', '!CUSTOM_GOLD')]).allocation_requests == ()
    assert client.usages('p') == {'INSTANCE': {'VCPU': 2, 'MEMORY_MB': 1024,
                                               'consumer_count': 1}}
    assert client.unclaim(instance) is True
    assert client.unclaim(instance) is False
    assert client.get_allocations(instance).allocations == {}


def test_claim_conflicts_say_why(client):
    rp = client.ensure_provider(str(uuid.uuid4()), 'host-d').uuid
    client.set_inventory(rp, {'VCPU': Inventory(total=2)})
    first = str(uuid.uuid4())
    client.claim(first, {rp: {'VCPU': 2}}, project_id='p', user_id='u')
    with pytest.raises(ClaimConflict) as full:
        client.claim(str(uuid.uuid4()), {rp: {'VCPU': 1}}, project_id='p', user_id='u')
    assert not full.value.lost_race
    assert 'exceed the capacity' in full.value.detail
    with pytest.raises(ClaimConflict) as stale:
        client.claim(first, {rp: {'VCPU': 1}}, project_id='p', user_id='u',
                     consumer_generation=None)
    assert stale.value.lost_race and stale.value.stale_consumer
    assert not full.value.stale_consumer
    client.claim(first, {rp: {'VCPU': 1}}, project_id='p', user_id='u',
                 consumer_generation=1)
    assert client.get_allocations(first).allocations == {rp: {'VCPU': 1}}


def test_a_batch_claim_writes_every_consumer_or_none(client):
    small = client.ensure_provider(str(uuid.uuid4()), 'host-small').uuid
    big = client.ensure_provider(str(uuid.uuid4()), 'host-big').uuid
    client.set_inventory(small, {'VCPU': Inventory(total=2)})
    client.set_inventory(big, {'VCPU': Inventory(total=8)})
    first, second, third = (str(uuid.uuid4()) for _ in range(3))

    client.claim_many({first: {small: {'VCPU': 2}}, second: {big: {'VCPU': 4}}},
                      project_id='p', user_id='u')
    assert client.get_allocations(first).allocations == {small: {'VCPU': 2}}
    assert client.get_allocations(second).allocations == {big: {'VCPU': 4}}

    # small is full: the whole batch is refused, big's share included.
    with pytest.raises(ClaimConflict) as refused:
        client.claim_many({third: {big: {'VCPU': 1}},
                           str(uuid.uuid4()): {small: {'VCPU': 1}}},
                          project_id='p', user_id='u')
    assert 'exceed the capacity' in refused.value.detail
    assert client.get_allocations(third).allocations == {}
    assert client.usages('p') == {'INSTANCE': {'VCPU': 6, 'consumer_count': 2}}


class RecordingTransport(InProcessTransport):
    """Notes every request as (method, path)."""

    def __init__(self, app, **kwargs):
        super().__init__(app, **kwargs)
        self.seen: list[tuple[str, str]] = []

    def request(self, method, path, body=None, microversion='1.39'):
        self.seen.append((method, path))
        return super().request(method, path, body, microversion)


def test_a_new_providers_writes_go_at_the_generations_answered_without_reading_it(api):
    transport = RecordingTransport(api.app)
    client = PlacementClient(transport)
    for name in ('host-n1', 'host-n2'):
        transport.seen.clear()
        rp = client.create_provider(str(uuid.uuid4()), name).uuid
        generation = client.set_inventory(rp, {'VCPU': Inventory(total=8)}, generation=0)
        client.set_traits(rp, ['CUSTOM_HOLLOW', 'HW_CPU_X86_AVX2'], generation=generation)
        # The custom trait is created by the first provider's set_traits only.
        creates = [('PUT', '/traits/CUSTOM_HOLLOW')] if name == 'host-n1' else []
        assert transport.seen == [('POST', '/resource_providers'),
                                  ('PUT', f'/resource_providers/{rp}/inventories'),
                                  *creates,
                                  ('PUT', f'/resource_providers/{rp}/traits')]
        assert api.get(f'/resource_providers/{rp}/traits').json['traits'] == [
            'CUSTOM_HOLLOW', 'HW_CPU_X86_AVX2']


def test_a_stale_generation_given_is_read_again(client):
    rp = client.create_provider(str(uuid.uuid4()), 'host-s').uuid
    client.set_traits(rp, ['HW_CPU_X86_AVX2'])     # generation 1 now
    assert client.set_inventory(rp, {'VCPU': Inventory(total=8)}, generation=0) == 2


def test_a_custom_trait_deleted_since_the_client_made_it_is_made_again(api, client):
    rp = client.create_provider(str(uuid.uuid4()), 'host-t').uuid
    client.set_traits(rp, ['CUSTOM_GONE'])
    client.set_traits(rp, [])
    assert api.delete('/traits/CUSTOM_GONE').status == 204
    client.set_traits(rp, ['CUSTOM_GONE'])
    assert api.get(f'/resource_providers/{rp}/traits').json['traits'] == ['CUSTOM_GONE']


def test_many_new_providers_inventories_go_in_one_request_at_their_generations(api):
    transport = RecordingTransport(api.app, roles=['admin', 'service'])
    client = PlacementClient(transport)
    providers = [client.create_provider(str(uuid.uuid4()), f'host-m{i}').uuid for i in range(3)]
    traited = client.set_traits(providers[0], ['HW_CPU_X86_AVX2'], generation=0)
    transport.seen.clear()
    generations = client.set_many_inventories({
        rp: (traited if rp == providers[0] else 0,
             {'VCPU': Inventory(total=8), 'MEMORY_MB': Inventory(total=1024, reserved=64)})
        for rp in providers})
    assert transport.seen == [('POST', '/reshaper')]
    assert generations == {providers[0]: 3, providers[1]: 2, providers[2]: 2}
    for rp in providers:
        assert api.get(f'/resource_providers/{rp}').json['generation'] == generations[rp]
        assert client.get_inventory(rp) == {
            'VCPU': Inventory(total=8, max_unit=8),
            'MEMORY_MB': Inventory(total=1024, reserved=64, max_unit=1024)}


def test_an_empty_inventory_among_many_is_one_generation_bump_not_two(api):
    client = PlacementClient(InProcessTransport(api.app, roles=['admin', 'service']))
    full, empty = (client.create_provider(str(uuid.uuid4()), f'host-e{i}').uuid
                   for i in range(2))
    generations = client.set_many_inventories({
        full: (0, {'VCPU': Inventory(total=8)}), empty: (0, {})})
    for rp in (full, empty):
        assert api.get(f'/resource_providers/{rp}').json['generation'] == generations[rp]


def test_many_inventories_at_a_stale_generation_write_none_of_them(api):
    client = PlacementClient(InProcessTransport(api.app, roles=['admin', 'service']))
    fresh, moved = (client.create_provider(str(uuid.uuid4()), f'host-s{i}').uuid
                    for i in range(2))
    client.set_traits(moved, ['HW_CPU_X86_AVX2'], generation=0)
    with pytest.raises(PlacementClientError) as refused:
        client.set_many_inventories({rp: (0, {'VCPU': Inventory(total=8)})
                                     for rp in (fresh, moved)})
    assert (refused.value.status, refused.value.code) == (409, 'placement.concurrent_update')
    assert client.get_inventory(fresh) == {} and client.get_inventory(moved) == {}


def test_a_client_without_the_service_role_is_refused_many_inventories_and_asks_once(api):
    transport = RecordingTransport(api.app)     # noauth2's admin alone
    client = PlacementClient(transport)
    rp = client.create_provider(str(uuid.uuid4()), 'host-r').uuid
    for _ in range(2):
        with pytest.raises(PlacementClientError) as refused:
            client.set_many_inventories({rp: (0, {'VCPU': Inventory(total=8)})})
        assert refused.value.status == 403
    assert transport.seen.count(('POST', '/reshaper')) == 1
    assert client.set_inventory(rp, {'VCPU': Inventory(total=8)}, generation=0) == 1
