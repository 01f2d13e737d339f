"""Flavor request bodies: ``POST /flavors`` (Nova's ``flavor_manage.create``; ``description``
from 2.55), ``PUT /flavors/{id}`` (2.55: the description only), flavor access actions and
extra specs (``flavors_extraspecs``)."""
from __future__ import annotations

import copy

from cellplane_api.schemas import compile_schema

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255, 'pattern': r'^(?! )[^\x00-\x1f]*(?<! )$'}
_AMOUNT = {'type': ['integer', 'string'], 'pattern': '^[0-9]+$', 'minimum': 0}

_CREATE = {
    'type': 'object',
    'properties': {
        'flavor': {
            'type': 'object',
            'properties': {
                'name': _NAME,
                'id': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255,
                       'pattern': r'^(?! )[a-zA-Z0-9. _-]+(?<! )$'},
                'ram': dict(_AMOUNT, minimum=1),
                'vcpus': dict(_AMOUNT, minimum=1),
                'disk': _AMOUNT,
                'OS-FLV-EXT-DATA:ephemeral': _AMOUNT,
                'swap': _AMOUNT,
                'rxtx_factor': {'type': ['number', 'string'],
                                'pattern': r'^[0-9]+(\.[0-9]+)?$', 'minimum': 0},
                'os-flavor-access:is_public': {'type': 'boolean'},
            },
            'required': ['name', 'ram', 'vcpus', 'disk'],
            'additionalProperties': False,
        },
    },
    'required': ['flavor'],
    'additionalProperties': False,
}
# Nova's parameter_types.description: printable text, or null.
_DESCRIPTION = {'type': ['string', 'null'], 'minLength': 0, 'maxLength': 65535,
                'pattern': r'^[^\x00-\x08\x0b\x0c\x0e-\x1f]*$'}
_CREATE_V255 = copy.deepcopy(_CREATE)
_CREATE_V255['properties']['flavor']['properties']['description'] = _DESCRIPTION

CREATE = compile_schema(_CREATE)
CREATE_V255 = compile_schema(_CREATE_V255)

UPDATE_V255 = compile_schema({
    'type': 'object',
    'properties': {
        'flavor': {'type': 'object', 'properties': {'description': _DESCRIPTION},
                   'required': ['description'], 'additionalProperties': False},
    },
    'required': ['flavor'],
    'additionalProperties': False,
})

_SPEC_VALUE = {'type': ['string', 'number', 'boolean'], 'minLength': 0, 'maxLength': 255}

SET_EXTRA_SPECS = compile_schema({
    'type': 'object',
    'properties': {
        'extra_specs': {
            'type': 'object',
            'patternProperties': {r'^[a-zA-Z0-9-_:. ]{1,255}$': _SPEC_VALUE},
            'additionalProperties': False,
        },
    },
    'required': ['extra_specs'],
    'additionalProperties': False,
})

UPDATE_EXTRA_SPEC = compile_schema({
    'type': 'object',
    'patternProperties': {r'^[a-zA-Z0-9-_:. ]{1,255}$': _SPEC_VALUE},
    'additionalProperties': False,
    'minProperties': 1,
    'maxProperties': 1,
})

_TENANT = {'type': 'object', 'properties': {'tenant': {'type': 'string', 'minLength': 1,
                                                       'maxLength': 255}},
           'required': ['tenant'], 'additionalProperties': False}

ACCESS_ACTION = compile_schema({
    'oneOf': [
        {'type': 'object', 'properties': {'addTenantAccess': _TENANT},
         'required': ['addTenantAccess'], 'additionalProperties': False},
        {'type': 'object', 'properties': {'removeTenantAccess': _TENANT},
         'required': ['removeTenantAccess'], 'additionalProperties': False},
    ],
})
