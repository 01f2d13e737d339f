"""RequestSpec, Flavor and Selection cross the wire intact and are validated on receipt."""
from __future__ import annotations

import json

import pytest

from rpc_schemas import REGISTRY
from rpc_schemas.base import stored_schema
from rpc_schemas.errors import MalformedPayload
from rpc_schemas.flavor import Flavor
from rpc_schemas.request_spec import InstanceGroup, RequestedDestination, RequestSpec, SchedulingRetry
from rpc_schemas.selection import Selection


def _full_spec() -> RequestSpec:
    return RequestSpec(
        flavor=Flavor(name='m1.large', vcpus=4, memory_mb=8192, root_gb=40,
                      extra_specs={'resources:VGPU': '1', 'trait:HW_CPU_X86_AVX2': 'required'}),
        project_id='p1', user_id='u1', num_instances=3,
        image_properties={'hw_architecture': 'x86_64'},
        availability_zone='az2',
        scheduler_hints={'different_host': ['i-1', 'i-2']},
        instance_group=InstanceGroup(uuid='g1', policy='anti-affinity',
                                     members=['i-1'], hosts=['h1'], level='rack'),
        requested_destination=RequestedDestination(cell_uuid='c1', aggregates=['a1']),
        ignore_hosts=['h9'],
        retry=SchedulingRetry(num_attempts=2, hosts=['h3']))


def _wire(payload):
    return json.loads(json.dumps(payload.to_primitive()))


def test_request_spec_with_every_part_survives_a_json_round_trip():
    spec = _full_spec()
    assert REGISTRY.from_primitive(_wire(spec)) == spec


def test_selection_survives_a_json_round_trip():
    selection = Selection(
        service_host='h1', nodename='n1', compute_node_uuid='rp-1', cell_uuid='c1',
        allocation_request={'allocations': {'rp-1': {'resources': {'VCPU': 1}}}},
        allocation_request_version='1.36', limits={'VCPU': 64},
        availability_zone='az1')
    assert REGISTRY.from_primitive(_wire(selection)) == selection


@pytest.mark.parametrize('cls', [Flavor, InstanceGroup, RequestedDestination,
                                 SchedulingRetry, RequestSpec, Selection],
                         ids=lambda c: c.NAME)
def test_stored_schema_matches_the_class(cls):
    assert stored_schema(cls) == cls.json_schema()


def test_group_policy_outside_affinity_and_anti_affinity_is_rejected():
    wire = _wire(InstanceGroup(uuid='g', policy='affinity'))
    wire['cellplane.data']['policy'] = 'soft-affinity'
    with pytest.raises(MalformedPayload, match='policy'):
        REGISTRY.from_primitive(wire)


def test_request_spec_without_flavor_is_rejected():
    wire = _wire(_full_spec())
    del wire['cellplane.data']['flavor']
    with pytest.raises(MalformedPayload, match='flavor'):
        REGISTRY.from_primitive(wire)


def test_flavor_extra_spec_values_must_be_strings():
    wire = _wire(Flavor(name='f', vcpus=1, memory_mb=1))
    wire['cellplane.data']['extra_specs'] = {'resources:VCPU': 2}
    with pytest.raises(MalformedPayload, match='extra_specs'):
        Flavor.from_primitive(wire)
