"""JSON Schemas of allocation writes, one per microversion that changed them.

PUT /allocations/{consumer_uuid}:
  1.0   {"allocations": [{"resource_provider": {"uuid"}, "resources": {...}}]}
  1.8   + project_id, user_id (required)
  1.12  "allocations" becomes {rp_uuid: {"resources": {...}}}
  1.28  + consumer_generation (required, may be null); allocations may be {}
  1.34  + mappings (accepted, ignored)
  1.38  + consumer_type (required)
POST /allocations (1.13+): {consumer_uuid: <the PUT body of that version>}.
"""
from __future__ import annotations

import copy
import re

from placement.schemas import common

_RESOURCES = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {common.RC_PATTERN: {'type': 'integer', 'minimum': 1}},
    'additionalProperties': False,
}
_ID = {'type': 'string', 'minLength': 1, 'maxLength': 255}

PUT_1_0 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'array',
            'minItems': 1,
            'items': {
                'type': 'object',
                'properties': {
                    'resource_provider': {
                        'type': 'object',
                        'properties': {'uuid': {'type': 'string', 'format': 'uuid'}},
                        'additionalProperties': False,
                        'required': ['uuid'],
                    },
                    'resources': _RESOURCES,
                },
                'required': ['resource_provider', 'resources'],
                'additionalProperties': False,
            },
        },
    },
    'required': ['allocations'],
    'additionalProperties': False,
}

PUT_1_8 = copy.deepcopy(PUT_1_0)
PUT_1_8['properties']['project_id'] = _ID
PUT_1_8['properties']['user_id'] = _ID
PUT_1_8['required'] += ['project_id', 'user_id']

PUT_1_12 = {
    'type': 'object',
    'properties': {
        'allocations': {
            'type': 'object',
            'minProperties': 1,
            'patternProperties': {
                common.UUID_PATTERN: {
                    'type': 'object',
                    'properties': {
                        'generation': {'type': 'integer'},   # accepted, ignored
                        'resources': _RESOURCES,
                    },
                    'required': ['resources'],
                    'additionalProperties': False,
                },
            },
            'additionalProperties': False,
        },
        'project_id': _ID,
        'user_id': _ID,
    },
    'required': ['allocations', 'project_id', 'user_id'],
    'additionalProperties': False,
}

# In POST, and in PUT from 1.28, an empty "allocations" removes them all.
_DELETABLE = copy.deepcopy(PUT_1_12)
_DELETABLE['properties']['allocations']['minProperties'] = 0

_GENERATION = {'type': ['integer', 'null']}

PUT_1_28 = copy.deepcopy(_DELETABLE)
PUT_1_28['properties']['consumer_generation'] = _GENERATION
PUT_1_28['required'].append('consumer_generation')

_MAPPINGS = {
    'type': 'object',
    'minProperties': 1,
    'patternProperties': {
        common.GROUP_PAT_1_33: {
            'type': 'array', 'minItems': 1,
            'items': {'type': 'string', 'format': 'uuid'},
        },
    },
}
PUT_1_34 = copy.deepcopy(PUT_1_28)
PUT_1_34['properties']['mappings'] = _MAPPINGS

PUT_1_38 = copy.deepcopy(PUT_1_34)
PUT_1_38['properties']['consumer_type'] = {
    'type': 'string', 'pattern': common.CONSUMER_TYPE_PATTERN,
    'minLength': 1, 'maxLength': 255,
}
PUT_1_38['required'].append('consumer_type')


def _post(per_consumer: dict) -> dict:
    return {
        'type': 'object',
        'minProperties': 1,
        'additionalProperties': False,
        'patternProperties': {common.UUID_PATTERN: per_consumer},
    }


POST_1_13 = _post(_DELETABLE)
POST_1_28 = _post(PUT_1_28)
POST_1_34 = _post(PUT_1_34)
POST_1_38 = _post(PUT_1_38)


def put_schema(mv) -> dict:
    for version, schema in ((1, 38), PUT_1_38), ((1, 34), PUT_1_34), \
            ((1, 28), PUT_1_28), ((1, 12), PUT_1_12), ((1, 8), PUT_1_8):
        if mv >= version:
            return schema
    return PUT_1_0


def post_schema(mv) -> dict:
    for version, schema in ((1, 38), POST_1_38), ((1, 34), POST_1_34), \
            ((1, 28), POST_1_28):
        if mv >= version:
            return schema
    return POST_1_13


# A claim body checked by hand costs a few microseconds; jsonschema takes
# hundreds, a sizeable part of a claim. The hand check only ever says "yes,
# valid": anything it is unsure of (older microversions, mappings, any
# doubtful value) goes through jsonschema, which also words the error.
_UUID_KEY = re.compile(common.UUID_PATTERN)
_NAME = re.compile(common.RC_PATTERN)


def _is_id(value) -> bool:
    return type(value) is str and 1 <= len(value) <= 255


def certainly_valid_put(data, mv) -> bool:
    """True only if ``put_schema(mv)`` accepts ``data`` (1.28+ bodies)."""
    if mv < (1, 28) or type(data) is not dict:
        return False
    keys = _PUT_KEYS_1_38 if mv >= (1, 38) else _PUT_KEYS_1_28
    if data.keys() != keys:
        return False
    if not (_is_id(data['project_id']) and _is_id(data['user_id'])):
        return False
    generation = data['consumer_generation']
    if generation is not None and type(generation) is not int:
        return False
    if mv >= (1, 38):
        ctype = data['consumer_type']
        if not (_is_id(ctype) and _NAME.search(ctype)):
            return False
    allocations = data['allocations']
    if type(allocations) is not dict:
        return False
    for rp, entry in allocations.items():
        if not _UUID_KEY.search(rp) or type(entry) is not dict:
            return False
        if entry.keys() != _RESOURCES_ONLY:
            if entry.keys() != _RESOURCES_AND_GENERATION or type(entry['generation']) is not int:
                return False
        resources = entry['resources']
        if type(resources) is not dict or not resources:
            return False
        for rc, amount in resources.items():
            if type(amount) is not int or amount < 1 or not _NAME.search(rc):
                return False
    return True


_PUT_KEYS_1_28 = {'allocations', 'project_id', 'user_id', 'consumer_generation'}
_PUT_KEYS_1_38 = _PUT_KEYS_1_28 | {'consumer_type'}
_RESOURCES_ONLY = {'resources'}
_RESOURCES_AND_GENERATION = {'resources', 'generation'}
