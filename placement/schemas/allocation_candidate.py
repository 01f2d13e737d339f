"""JSON Schemas of the GET /allocation_candidates query string per microversion.

The query string is checked as a flat dict (the last value of a repeated
key); the repeatable keys (required, member_of) are parsed afterwards.
"""
from __future__ import annotations

import copy

from placement.schemas import common

GET_1_10 = {
    'type': 'object',
    'properties': {'resources': {'type': 'string'}},
    'required': ['resources'],
    'additionalProperties': False,
}

GET_1_16 = copy.deepcopy(GET_1_10)
GET_1_16['properties']['limit'] = {
    'type': ['integer', 'string'], 'pattern': '^[1-9][0-9]*$',
    'minimum': 1, 'minLength': 1,
}

GET_1_17 = copy.deepcopy(GET_1_16)
GET_1_17['properties']['required'] = {'type': ['string']}

GET_1_21 = copy.deepcopy(GET_1_17)
GET_1_21['properties']['member_of'] = {'type': ['string']}

# 1.25: granular groups, numbered suffixes.
_GROUPED = '^%s(' + common.GROUP_PAT + ')?$'
GET_1_25 = copy.deepcopy(GET_1_21)
for _key in ('resources', 'required', 'member_of'):
    del GET_1_25['properties'][_key]
del GET_1_25['required']
GET_1_25['patternProperties'] = {
    _GROUPED % key: {'type': 'string'}
    for key in ('resources', 'required', 'member_of')}
GET_1_25['properties']['group_policy'] = {'type': 'string', 'enum': ['none', 'isolate']}

GET_1_31 = copy.deepcopy(GET_1_25)
GET_1_31['patternProperties'][_GROUPED % 'in_tree'] = {'type': 'string'}

# 1.33: any string suffix.
_GROUPED_1_33 = '^%s(' + common.GROUP_PAT_1_33 + ')?$'
GET_1_33 = copy.deepcopy(GET_1_31)
GET_1_33['patternProperties'] = {
    _GROUPED_1_33 % key: {'type': 'string'}
    for key in ('resources', 'required', 'member_of', 'in_tree')}

GET_1_35 = copy.deepcopy(GET_1_33)
GET_1_35['properties']['root_required'] = {'type': ['string']}

GET_1_36 = copy.deepcopy(GET_1_35)
GET_1_36['properties']['same_subtree'] = {'type': ['string']}


def get_schema(mv) -> dict:
    for version, found in (((1, 36), GET_1_36), ((1, 35), GET_1_35),
                           ((1, 33), GET_1_33), ((1, 31), GET_1_31),
                           ((1, 25), GET_1_25), ((1, 21), GET_1_21),
                           ((1, 17), GET_1_17), ((1, 16), GET_1_16)):
        if mv >= version:
            return found
    return GET_1_10
