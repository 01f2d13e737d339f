"""The hand-written claim-body check never accepts what the schema refuses."""
from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from placement.microversion import Version
from placement.request import validator_for
from placement.schemas import allocation as schema

RP = '4e05a85b-e8a6-4b3a-82c1-5bd2c3b5ff2e'
GOOD = {'allocations': {RP: {'resources': {'VCPU': 1, 'MEMORY_MB': 512}}},
        'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
        'consumer_type': 'INSTANCE'}


def _mutations():
    def with_(path, value):
        body = copy.deepcopy(GOOD)
        target = body
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
        return body
    res = ('allocations', RP, 'resources')
    yield GOOD
    yield with_(('consumer_generation',), 3)
    yield with_(('allocations',), {})
    yield with_(('allocations', RP, 'generation'), 4)
    for bad in (0, -1, 1.0, True, '1', None):
        yield with_(res + ('VCPU',), bad)
    for rc in ('vcpu', 'VCPU\n', '', 'V-CPU'):
        yield with_(res + (rc,), 1)
    yield with_(res, {})
    yield with_(('allocations', 'not-a-uuid'), {'resources': {'VCPU': 1}})
    yield with_(('allocations', RP, 'generation'), '1')
    yield with_(('allocations', RP, 'extra'), 1)
    yield with_(('consumer_generation',), True)
    yield with_(('consumer_generation',), KeyError)
    yield with_(('consumer_type',), 'instance')
    yield with_(('consumer_type',), KeyError)
    yield with_(('project_id',), '')
    yield with_(('project_id',), 'x' * 256)
    yield with_(('user_id',), 7)
    yield with_(('mappings',), {'': [RP]})
    yield with_(('extra',), 1)


@pytest.mark.parametrize('mv', [Version(1, 28), Version(1, 34), Version(1, 38), Version(1, 39)])
@pytest.mark.parametrize('body', list(_mutations()))
def test_hand_check_agrees_with_the_schema(mv, body):
    if mv < (1, 38):
        body = {k: v for k, v in body.items() if k != 'consumer_type'}
    try:
        validator_for(schema.put_schema(mv)).validate(body)
        valid = True
    except jsonschema.ValidationError:
        valid = False
    if schema.certainly_valid_put(body, mv):
        assert valid
    canonical = GOOD if mv >= (1, 38) else {
        k: v for k, v in GOOD.items() if k != 'consumer_type'}
    if json.dumps(body) == json.dumps(canonical):   # (1.0 == True == 1 for ==)
        assert schema.certainly_valid_put(body, mv)   # the common case is fast


def test_older_microversions_always_use_the_schema():
    body = {k: v for k, v in GOOD.items() if k != 'consumer_type'}
    assert not schema.certainly_valid_put(body, Version(1, 27))
