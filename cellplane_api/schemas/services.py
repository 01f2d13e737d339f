"""``PUT /os-services/...`` bodies, per microversion (Nova's ``services`` schemas).

Below 2.53 the action's body names the service by ``host`` and
``binary`` (2.11 adds ``forced_down``); from 2.53 the service is the URL's
uuid and the body says what changes.
"""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

TRUE = (True, 'True', 'TRUE', 'true', '1', 'ON', 'On', 'on', 'YES', 'Yes', 'yes')
FALSE = (False, 'False', 'FALSE', 'false', '0', 'OFF', 'Off', 'off', 'NO', 'No', 'no')
# Nova's parameter_types.boolean: a JSON boolean or one of its spellings.
_BOOLEAN = {'type': ['boolean', 'string'], 'enum': list(TRUE + FALSE)}
_REASON = {'type': 'string', 'minLength': 1, 'maxLength': 255}
_LEGACY = {
    'host': {'type': 'string', 'minLength': 1, 'maxLength': 255,
             'pattern': '^[a-zA-Z0-9-._]*$'},
    'binary': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'disabled_reason': _REASON,
}

UPDATE_V21 = compile_schema({
    'type': 'object', 'properties': _LEGACY,
    'required': ['host', 'binary'], 'additionalProperties': False,
})

UPDATE_V211 = compile_schema({
    'type': 'object', 'properties': {**_LEGACY, 'forced_down': _BOOLEAN},
    'required': ['host', 'binary'], 'additionalProperties': False,
})

UPDATE_V253 = compile_schema({
    'type': 'object',
    'properties': {
        'status': {'type': 'string', 'enum': ['enabled', 'disabled']},
        'disabled_reason': _REASON,
        'forced_down': _BOOLEAN,
    },
    'additionalProperties': False,
})


def as_bool(value) -> bool:
    """A value ``_BOOLEAN`` accepted, as a bool."""
    return value in TRUE
