"""``POST /servers/{id}/action`` bodies for moves at 2.1, as Nova's schemas: exactly one action."""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

MIGRATE = 'migrate'
RESIZE = 'resize'
CONFIRM_RESIZE = 'confirmResize'
REVERT_RESIZE = 'revertResize'
MIGRATE_LIVE = 'os-migrateLive'

ACTION = compile_schema({
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
    },
    'minProperties': 1,
    'maxProperties': 1,
    'additionalProperties': False,
})
