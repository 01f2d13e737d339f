"""JSON Schemas of the GET /usages query string (1.9, and 1.38 with consumer_type)."""
from __future__ import annotations

import copy

from placement.schemas import common

GET_1_9 = {
    'type': 'object',
    'properties': {
        'project_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'user_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    },
    'required': ['project_id'],
    'additionalProperties': False,
}

GET_1_38 = copy.deepcopy(GET_1_9)
GET_1_38['properties']['consumer_type'] = {
    'type': 'string', 'pattern': common.CONSUMER_TYPE_GET_PATTERN,
    'minLength': 1, 'maxLength': 255,
}
