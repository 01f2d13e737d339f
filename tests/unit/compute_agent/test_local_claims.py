"""The compute agent's local resource check: what an instance takes, and what the host has left."""
from __future__ import annotations

import pytest

from compute_agent.local_claims import (
    InsufficientLocalResources,
    LocalClaims,
    driver_capacity,
    requested_resources,
)
from compute_agent.virt.driver import DriverInventory
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.selection import Selection

NODE = '11111111-1111-1111-1111-111111111111'
FLAVOR = Flavor(name='f', vcpus=2, memory_mb=1024, root_gb=0)
INSTANCE = Instance(uuid='22222222-2222-2222-2222-222222222222', project_id='p',
                    user_id='u', flavor=FLAVOR)


def _selection(allocations) -> Selection:
    return Selection(service_host='cmp1', nodename='cmp1', compute_node_uuid=NODE,
                     cell_uuid='c', allocation_request={'allocations': allocations},
                     allocation_request_version='1.36')


def test_requested_resources_come_from_the_allocation_request_on_this_node():
    selection = _selection({NODE: {'resources': {'VCPU': 4, 'MEMORY_MB': 2048,
                                                  'CUSTOM_GPU': 1}}})
    assert requested_resources(INSTANCE, selection) == {
        'VCPU': 4, 'MEMORY_MB': 2048, 'CUSTOM_GPU': 1}


def test_requested_resources_fall_back_to_the_flavor_without_zero_classes():
    assert requested_resources(INSTANCE, _selection({})) == {'VCPU': 2, 'MEMORY_MB': 1024}


def test_requested_resources_fall_back_to_the_flavors_resources_extra_specs():
    instance = Instance(uuid=INSTANCE.uuid, project_id='p', user_id='u', flavor=Flavor(
        name='f', vcpus=2, memory_mb=1024, root_gb=5,
        extra_specs={'resources:MEMORY_MB': '512', 'resources:DISK_GB': '0',
                     'resources:CUSTOM_GPU': '1'}))
    assert requested_resources(instance, _selection({})) == {
        'VCPU': 2, 'MEMORY_MB': 512, 'CUSTOM_GPU': 1}


def test_driver_capacity_applies_reserved_and_ratio():
    assert driver_capacity({'VCPU': DriverInventory(total=8, allocation_ratio=4.0),
                            'MEMORY_MB': DriverInventory(total=4096, reserved=512)}) == {
        'VCPU': 32, 'MEMORY_MB': 3584}


def test_claims_add_up_and_the_one_that_does_not_fit_says_why():
    claims = LocalClaims()
    claims.claim('a', {'MEMORY_MB': 3000}, {'MEMORY_MB': 4096})
    with pytest.raises(InsufficientLocalResources,
                       match=r'MEMORY_MB: 2000 wanted, 1096 free of 4096'):
        claims.claim('b', {'MEMORY_MB': 2000}, {'MEMORY_MB': 4096})
    assert claims.usage() == {'MEMORY_MB': 3000}
    claims.release('a')
    claims.claim('b', {'MEMORY_MB': 2000}, {'MEMORY_MB': 4096})
    assert claims.usage() == {'MEMORY_MB': 2000}


def test_a_class_the_host_does_not_have_is_refused():
    with pytest.raises(InsufficientLocalResources, match='CUSTOM_GPU: 1 wanted, this host has none'):
        LocalClaims().claim('a', {'CUSTOM_GPU': 1}, {'VCPU': 8})


def test_claiming_again_for_the_same_instance_replaces_its_claim():
    claims = LocalClaims()
    claims.claim('a', {'VCPU': 6}, {'VCPU': 8})
    claims.claim('a', {'VCPU': 8}, {'VCPU': 8})
    assert claims.usage() == {'VCPU': 8}
