"""Request bodies of provider aggregates (a bare list before 1.19)."""
import copy

_AGGREGATES_LIST_SCHEMA = {
    'type': 'array',
    'items': {'type': 'string', 'format': 'uuid'},
    'uniqueItems': True,
}

PUT_AGGREGATES_SCHEMA_V1_1 = copy.deepcopy(_AGGREGATES_LIST_SCHEMA)

PUT_AGGREGATES_SCHEMA_V1_19 = {
    'type': 'object',
    'properties': {
        'aggregates': copy.deepcopy(_AGGREGATES_LIST_SCHEMA),
        'resource_provider_generation': {'type': 'integer'},
    },
    'required': ['aggregates', 'resource_provider_generation'],
    'additionalProperties': False,
}
