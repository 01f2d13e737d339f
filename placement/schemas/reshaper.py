"""JSON Schemas of POST /reshaper (1.30; mappings 1.34; consumer_type 1.38).

    {"inventories": {RP_UUID: <the PUT /resource_providers/{uuid}/inventories body>},
     "allocations": {CONSUMER_UUID: <the POST /allocations entry>}}
"""
from __future__ import annotations

import copy

from placement.schemas import allocation, common, inventory


def _schema(post_allocations: dict) -> dict:
    allocations = copy.deepcopy(post_allocations)
    allocations['minProperties'] = 0
    return {
        'type': 'object',
        'properties': {
            'inventories': {
                'type': 'object',
                'patternProperties': {common.UUID_PATTERN: inventory.PUT_INVENTORY_SCHEMA},
                'minProperties': 1,
                'additionalProperties': False,
            },
            'allocations': allocations,
        },
        'required': ['inventories', 'allocations'],
        'additionalProperties': False,
    }


POST_1_30 = _schema(allocation.POST_1_28)
POST_1_34 = _schema(allocation.POST_1_34)
POST_1_38 = _schema(allocation.POST_1_38)


def post_schema(mv) -> dict:
    if mv >= (1, 38):
        return POST_1_38
    if mv >= (1, 34):
        return POST_1_34
    return POST_1_30
