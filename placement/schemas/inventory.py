"""Request bodies of provider inventories."""
import copy

from placement.schemas import common

MAX_INT = 0x7FFFFFFF
SQL_SP_FLOAT_MAX = 3.40282e+38

BASE_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'total': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
        'reserved': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 0},
        'min_unit': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
        'max_unit': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
        'step_size': {'type': 'integer', 'maximum': MAX_INT, 'minimum': 1},
        'allocation_ratio': {'type': 'number', 'maximum': SQL_SP_FLOAT_MAX},
    },
    'required': ['total', 'resource_provider_generation'],
    'additionalProperties': False,
}

POST_INVENTORY_SCHEMA = copy.deepcopy(BASE_INVENTORY_SCHEMA)
POST_INVENTORY_SCHEMA['properties']['resource_class'] = {
    'type': 'string', 'pattern': common.RC_PATTERN}
POST_INVENTORY_SCHEMA['required'] = ['total', 'resource_class']

PUT_INVENTORY_RECORD_SCHEMA = copy.deepcopy(BASE_INVENTORY_SCHEMA)
PUT_INVENTORY_RECORD_SCHEMA['required'] = ['total']

PUT_INVENTORY_SCHEMA = {
    'type': 'object',
    'properties': {
        'resource_provider_generation': {'type': 'integer'},
        'inventories': {
            'type': 'object',
            'patternProperties': {common.RC_PATTERN: PUT_INVENTORY_RECORD_SCHEMA},
        },
    },
    'required': ['resource_provider_generation', 'inventories'],
    'additionalProperties': False,
}
