"""``POST /os-server-groups`` bodies per microversion, as Nova's ``server_groups`` schemas.

Below 2.64 ``policies`` is a list of exactly one policy (the soft ones from
2.15); from 2.64 ``policy`` is one name and ``rules`` an object. The rules'
names and values are checked by ``cellplane_api.server_groups.from_rules``
(400 naming the rule), not here, so an unknown rule is refused by name.
"""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': r'^(?! )[^\x00-\x1f]*(?<! )$'}
_HARD = ['anti-affinity', 'affinity']
_ALL = _HARD + ['soft-anti-affinity', 'soft-affinity']


def _body(group: dict) -> dict:
    return {'type': 'object', 'properties': {'server_group': group},
            'required': ['server_group'], 'additionalProperties': False}


def _policies(names: list[str]) -> dict:
    return {'type': 'object',
            'properties': {'name': _NAME,
                           'policies': {'type': 'array', 'minItems': 1, 'maxItems': 1,
                                        'items': {'type': 'string', 'enum': names}}},
            'required': ['name', 'policies'], 'additionalProperties': False}


CREATE = compile_schema(_body(_policies(_HARD)))
CREATE_V215 = compile_schema(_body(_policies(_ALL)))
CREATE_V264 = compile_schema(_body({
    'type': 'object',
    'properties': {'name': _NAME, 'policy': {'type': 'string', 'enum': _ALL},
                   'rules': {'type': 'object'}},
    'required': ['name', 'policy'], 'additionalProperties': False}))


def create_for(version) -> object:
    """The validator of ``POST /os-server-groups`` at ``version``."""
    if version >= (2, 64):
        return CREATE_V264
    return CREATE_V215 if version >= (2, 15) else CREATE
