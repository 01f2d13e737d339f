"""Request bodies and query strings of /traits and provider traits."""

from placement.schemas import common

TRAIT = {'type': 'string', 'minLength': 1, 'maxLength': 255}
CUSTOM_TRAIT = dict(TRAIT, pattern=common.CUSTOM_TRAIT_PATTERN)

SET_TRAITS_FOR_RP_SCHEMA = {
    'type': 'object',
    'properties': {
        'traits': {'type': 'array', 'items': TRAIT},
        'resource_provider_generation': {'type': 'integer'},
    },
    'required': ['traits', 'resource_provider_generation'],
    'additionalProperties': False,
}

LIST_TRAIT_SCHEMA = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string'},
        'associated': {'type': 'string'},
    },
    'additionalProperties': False,
}
