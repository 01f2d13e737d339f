"""Request bodies of /resource_classes."""
import copy

from placement.schemas import common

POST_RC_SCHEMA_V1_2 = {
    'type': 'object',
    'properties': {
        'name': {'type': 'string', 'pattern': common.CUSTOM_RC_PATTERN,
                 'maxLength': 255},
    },
    'required': ['name'],
    'additionalProperties': False,
}
PUT_RC_SCHEMA_V1_2 = copy.deepcopy(POST_RC_SCHEMA_V1_2)
