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
