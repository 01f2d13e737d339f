"""``POST /servers`` request bodies per microversion, as Nova's ``servers.create`` schemas
(the parts this API honours).

Unknown top-level server attributes are refused (400 naming them), so a
client learns at once what is not supported rather than being ignored:
``return_reservation_id`` (no reservation ids), ``key_name``, ``user_data``,
non-empty ``metadata``, ``tags`` (2.52), ``trusted_image_certificates``
(2.63)... ``security_groups`` is accepted and not recorded; ``networks``
may be an empty list, and from 2.37 it is required and may be ``"auto"``
or ``"none"`` (recorded in the request spec): cellplane has no network
service, so a list naming networks or ports is refused.

``for_version`` picks the schema of a request's version: 2.1 (to 2.18),
2.19 (``description``), 2.37 (``networks`` required, ``"auto"``/``"none"``).
``block_device_mapping_v2`` is accepted only as the image's local root disk,
what python-openstackclient sends with ``--image`` (the handler checks it:
there is no volume service).
"""
from __future__ import annotations

import copy

from cellplane_api.schemas import compile_schema

_ONE_OR_MANY_UUIDS = {'oneOf': [{'type': 'string', 'minLength': 1, 'maxLength': 255},
                                {'type': 'array', 'minItems': 1,
                                 'items': {'type': 'string', 'minLength': 1,
                                           'maxLength': 255}}]}
_COUNT = {'type': ['integer', 'string'], 'pattern': '^[0-9]+$', 'minimum': 1}
# No network service: a list may be given only empty.
_NO_NETWORKS = {'type': 'array', 'maxItems': 0}

_HINTS = {
    'type': 'object',
    'properties': {
        'group': {'type': 'string', 'minLength': 1, 'maxLength': 255},
        'same_host': _ONE_OR_MANY_UUIDS,
        'different_host': _ONE_OR_MANY_UUIDS,
        'same_domain': _ONE_OR_MANY_UUIDS,
        'different_domain': _ONE_OR_MANY_UUIDS,
    },
    'additionalProperties': False,
}

_V21 = {
    'type': 'object',
    'properties': {
        'server': {
            'type': 'object',
            'properties': {
                'name': {'type': 'string', 'minLength': 1, 'maxLength': 255,
                         'pattern': r'^(?! )[^\x00-\x1f]*(?<! )$'},
                'imageRef': {'type': 'string', 'maxLength': 255},
                'flavorRef': {'type': ['string', 'integer'], 'minLength': 1},
                'availability_zone': {'type': 'string', 'minLength': 1, 'maxLength': 255},
                'min_count': _COUNT,
                'max_count': _COUNT,
                'metadata': {'type': 'object', 'maxProperties': 0},
                'networks': _NO_NETWORKS,
                'security_groups': {'type': 'array'},
                # What openstack server create --image sends besides imageRef:
                # checked by the handler (only the image's local root disk).
                'block_device_mapping_v2': {'type': 'array', 'maxItems': 255,
                                            'items': {'type': 'object'}},
            },
            'required': ['name', 'flavorRef'],
            'additionalProperties': False,
        },
        'os:scheduler_hints': _HINTS,
        # Nova's other name for them (openstacksdk sends this one).
        'OS-SCH-HNT:scheduler_hints': _HINTS,
    },
    'required': ['server'],
    'additionalProperties': False,
}

_V219 = copy.deepcopy(_V21)
_V219['properties']['server']['properties']['description'] = {
    'type': ['string', 'null'], 'maxLength': 255, 'pattern': r'^[^\x00-\x1f]*$'}

_V237 = copy.deepcopy(_V219)
_V237['properties']['server']['properties']['networks'] = {
    'oneOf': [_NO_NETWORKS, {'type': 'string', 'enum': ['none', 'auto']}]}
_V237['properties']['server']['required'].append('networks')

CREATE = compile_schema(_V21)
CREATE_V219 = compile_schema(_V219)
CREATE_V237 = compile_schema(_V237)


def for_version(minor: int):
    """The create schema of microversion 2.``minor``."""
    if minor >= 37:
        return CREATE_V237
    return CREATE_V219 if minor >= 19 else CREATE
