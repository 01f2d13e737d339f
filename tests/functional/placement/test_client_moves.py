"""placement.client's move claim and its undo: the migration consumer, in one POST /allocations each."""
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
from tests.functional.placement.test_client import InterleavingTransport


@pytest.fixture
def hosts(api):
    client = PlacementClient(InProcessTransport(api.app))
    source, dest = (client.ensure_provider(str(uuid.uuid4()), name).uuid
                    for name in ('source', 'dest'))
    client.set_inventory(source, {'VCPU': Inventory(total=4)})
    client.set_inventory(dest, {'VCPU': Inventory(total=4)})
    instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
    client.claim(instance, {source: {'VCPU': 2}}, project_id='p', user_id='u')
    return client, source, dest, instance, migration


def test_the_move_claim_gives_the_source_to_the_migration_and_the_destination_to_the_instance(
        hosts):
    client, source, dest, instance, migration = hosts
    client.claim_move(instance, migration, {dest: {'VCPU': 3}}, project_id='p', user_id='u')
    assert client.get_allocations(instance).allocations == {dest: {'VCPU': 3}}
    moved = client.get_allocations(migration)
    assert (moved.allocations, moved.project_id, moved.user_id) == (
        {source: {'VCPU': 2}}, 'p', 'u')
    assert client.usages('p') == {'INSTANCE': {'VCPU': 3, 'consumer_count': 1},
                                  'MIGRATION': {'VCPU': 2, 'consumer_count': 1}}

    # Undone: the instance holds its source allocation again, the migration nothing.
    assert client.unclaim_move(instance, migration) is True
    assert client.get_allocations(instance).allocations == {source: {'VCPU': 2}}
    assert client.get_allocations(migration).allocations == {}
    # A second undo finds nothing to undo and writes nothing.
    assert client.unclaim_move(instance, migration) is False
    assert client.get_allocations(instance).allocations == {source: {'VCPU': 2}}


def test_a_destination_without_room_refuses_the_move_and_nothing_changes(hosts):
    client, source, dest, instance, migration = hosts
    with pytest.raises(ClaimConflict) as refused:
        client.claim_move(instance, migration, {dest: {'VCPU': 5}}, project_id='p',
                          user_id='u')
    assert 'Unable to allocate inventory' in refused.value.detail
    assert client.get_allocations(instance).allocations == {source: {'VCPU': 2}}
    assert client.get_allocations(migration).allocations == {}


def test_a_same_host_resize_holds_both_sizes_on_the_one_host(hosts):
    client, source, _, instance, migration = hosts
    client.claim_move(instance, migration, {source: {'VCPU': 2}}, project_id='p',
                      user_id='u')
    usage = client._call('GET', f'/resource_providers/{source}/usages').body['usages']
    assert usage == {'VCPU': 4}
    with pytest.raises(ClaimConflict):   # the old size stays held: no room for more
        client.claim(str(uuid.uuid4()), {source: {'VCPU': 1}}, project_id='p', user_id='u')


def test_an_instance_holding_nothing_has_nothing_to_move(hosts):
    client, _, dest, _, migration = hosts
    with pytest.raises(PlacementClientError) as refused:
        client.claim_move(str(uuid.uuid4()), migration, {dest: {'VCPU': 1}},
                          project_id='p', user_id='u')
    assert refused.value.status == 409 and 'holds no allocation' in refused.value.detail
    assert client.get_allocations(migration).allocations == {}


def test_a_write_between_the_read_and_the_post_is_read_again(api, hosts):
    client, source, dest, instance, migration = hosts
    other = PlacementClient(InProcessTransport(api.app))

    def the_instance_grows():   # bumps the instance's consumer generation
        other.claim(instance, {source: {'VCPU': 3}}, project_id='p', user_id='u',
                    consumer_generation=other.get_allocations(instance).generation)

    transport = InterleavingTransport(api.app, 'POST', '/allocations', the_instance_grows)
    PlacementClient(transport).claim_move(instance, migration, {dest: {'VCPU': 1}},
                                          project_id='p', user_id='u')
    assert transport.writes == 2
    # What the migration took is what the instance held when the move was written.
    assert client.get_allocations(migration).allocations == {source: {'VCPU': 3}}
    assert client.get_allocations(instance).allocations == {dest: {'VCPU': 1}}


class _Recording(InProcessTransport):
    def __init__(self, app) -> None:
        super().__init__(app)
        self.calls: list[str] = []

    def request(self, method, path, body=None, microversion='1.39'):
        self.calls.append(f'{method} {path}')
        return super().request(method, path, body, microversion)


def test_the_move_claim_reads_the_instance_alone_before_its_post(api, hosts):
    _, source, dest, instance, migration = hosts
    transport = _Recording(api.app)
    PlacementClient(transport).claim_move(instance, migration, {dest: {'VCPU': 1}},
                                          project_id='p', user_id='u')
    # The migration's consumer is new: its null generation in the POST says so.
    assert transport.calls == [f'GET /allocations/{instance}', 'POST /allocations']


def test_a_migration_holding_an_allocation_already_is_refused_and_nothing_changes(hosts):
    client, source, dest, instance, migration = hosts
    client.claim(migration, {dest: {'VCPU': 1}}, project_id='p', user_id='u')
    with pytest.raises(PlacementClientError) as refused:
        client.claim_move(instance, migration, {dest: {'VCPU': 1}}, project_id='p',
                          user_id='u')
    assert refused.value.status == 409 and 'already holds' in refused.value.detail
    assert client.get_allocations(instance).allocations == {source: {'VCPU': 2}}
    assert client.get_allocations(migration).allocations == {dest: {'VCPU': 1}}
