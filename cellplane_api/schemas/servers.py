"""``POST /servers`` at 2.1, as Nova's ``servers.create`` schema (the parts this API honours).

Unknown top-level server attributes are refused (400 naming them), so a
client learns at once what is not supported rather than being ignored:
``return_reservation_id`` (no reservation ids yet), ``key_name``, ``user_data``,
non-empty ``metadata``... ``networks`` and ``security_groups`` are accepted
and not recorded (no network service).
"""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

_ONE_OR_MANY_UUIDS = {'oneOf': [{'type': 'string', 'minLength': 1, 'maxLength': 255},
                                {'type': 'array', 'minItems': 1,
                                 'items': {'type': 'string', 'minLength': 1,
                                           'maxLength': 255}}]}
_COUNT = {'type': ['integer', 'string'], 'pattern': '^[0-9]+$', 'minimum': 1}

CREATE = compile_schema({
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                         'pattern': r'^(?! )[^\x00-\x1f]*(?<! )$'},
                'imageRef': {'type': 'string', 'maxLength': 255},
                'flavorRef': {'type': ['string', 'integer'], 'minLength': 1},
                'availability_zone': {'type': 'string', 'minLength': 1, 'maxLength': 255},
                'min_count': _COUNT,
                'max_count': _COUNT,
                'metadata': {'type': 'object', 'maxProperties': 0},
                'networks': {'type': 'array', 'items': {'type': 'object'}},
                'security_groups': {'type': 'array'},
            },
            'required': ['name', 'flavorRef'],
            'additionalProperties': False,
        },
        'os:scheduler_hints': {
            'type': 'object',
            'properties': {
                'group': {'type': 'string', 'minLength': 1, 'maxLength': 255},
                'same_host': _ONE_OR_MANY_UUIDS,
                'different_host': _ONE_OR_MANY_UUIDS,
                'same_domain': _ONE_OR_MANY_UUIDS,
                'different_domain': _ONE_OR_MANY_UUIDS,
            },
            'additionalProperties': False,
        },
    },
    'required': ['server'],
    'additionalProperties': False,
})
