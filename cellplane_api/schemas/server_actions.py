"""``POST /servers/{id}/action`` bodies for moves, as Nova's schemas: exactly one action.

``ACTION`` checks every body at 2.1; ``evacuate_for`` is the evacuate
body's own schema at a microversion (``onSharedStorage`` required below
2.14 and gone from it, ``force`` from 2.29).

``os-migrateLive`` changes with the microversion as Nova's: below 2.25
``host``, ``block_migration`` and ``disk_over_commit`` are required; from
2.25 ``disk_over_commit`` is gone and ``block_migration`` may be ``auto``;
from 2.30 ``force`` may be given, and from 2.68 no longer. ``action_schema``
picks the one of a version.
"""
from __future__ import annotations

import copy

from cellplane_api.schemas import compile_schema
from cellplane_api.schemas.services import FALSE, TRUE

MIGRATE = 'migrate'
RESIZE = 'resize'
CONFIRM_RESIZE = 'confirmResize'
REVERT_RESIZE = 'revertResize'
MIGRATE_LIVE = 'os-migrateLive'
EVACUATE = 'evacuate'

_ACTION = {
    'type': 'object',
    'properties': {
        MIGRATE: {'type': 'null'},
        RESIZE: {
            'type': 'object',
            'properties': {
                'flavorRef': {'type': ['string', 'integer'], 'minLength': 1},
                'OS-DCF:diskConfig': {'type': 'string', 'enum': ['AUTO', 'MANUAL']},
            },
            'required': ['flavorRef'],
            'additionalProperties': False,
        },
        MIGRATE_LIVE: {
            'type': 'object',
            'properties': {
                'host': {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 255},
                'block_migration': {'type': ['boolean', 'string'],
                                    'enum': [True, False, 'True', 'False', 'true', 'false']},
                'disk_over_commit': {'type': ['boolean', 'string'],
                                     'enum': [True, False, 'True', 'False', 'true',
                                              'false']},
            },
            'required': ['host', 'block_migration', 'disk_over_commit'],
            'additionalProperties': False,
        },
        CONFIRM_RESIZE: {'type': 'null'},
        REVERT_RESIZE: {'type': 'null'},
        EVACUATE: {'type': 'object'},    # its own schema per microversion: evacuate_for
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
}

# Nova's parameter_types.boolean, hostname and admin_password.
_BOOLEAN = {'type': ['boolean', 'string'], 'enum': list(TRUE + FALSE)}
_HOST = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': '^[a-zA-Z0-9-._]*$'}
_PASSWORD = {'type': 'string'}


def _live_from(version: tuple[int, int]) -> dict:
    schema = copy.deepcopy(_ACTION)
    live = schema['properties'][MIGRATE_LIVE]
    if version >= (2, 25):
        del live['properties']['disk_over_commit']
        live['properties']['block_migration'] = {
            'type': ['boolean', 'string'], 'enum': [*_BOOLEAN['enum'], 'auto']}
        live['required'] = ['block_migration', 'host']
    if (2, 30) <= version < (2, 68):
        live['properties']['force'] = _BOOLEAN
    return schema


ACTION = compile_schema(_ACTION)
_ACTION_V225 = compile_schema(_live_from((2, 25)))
_ACTION_V230 = compile_schema(_live_from((2, 30)))
_ACTION_V268 = compile_schema(_live_from((2, 68)))


def action_schema(version) -> object:
    """The validator of a move action's body at ``version``."""
    if version >= (2, 68):
        return _ACTION_V268
    if version >= (2, 30):
        return _ACTION_V230
    return _ACTION_V225 if version >= (2, 25) else ACTION


def _evacuate(properties: dict, required: list[str]):
    return compile_schema({
        'type': 'object',
        'properties': {EVACUATE: {'type': 'object', 'properties': properties,
                                  'required': required, 'additionalProperties': False}},
        'required': [EVACUATE],
        'additionalProperties': False,
    })


_EVACUATE_V21 = _evacuate({'host': _HOST, 'onSharedStorage': _BOOLEAN,
                           'adminPass': _PASSWORD}, ['onSharedStorage'])
_EVACUATE_V214 = _evacuate({'host': _HOST, 'adminPass': _PASSWORD}, [])
_EVACUATE_V229 = _evacuate({'host': _HOST, 'adminPass': _PASSWORD, 'force': _BOOLEAN}, [])


def evacuate_for(minor: int):
    """The evacuate body's schema at 2.``minor``."""
    if minor >= 29:
        return _EVACUATE_V229
    if minor >= 14:
        return _EVACUATE_V214
    return _EVACUATE_V21
