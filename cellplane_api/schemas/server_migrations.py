"""``POST /servers/{id}/migrations/{id}/action`` bodies (2.22), as Nova's schema: ``{"force_complete": null}``."""
from __future__ import annotations

from cellplane_api.schemas import compile_schema

FORCE_COMPLETE = compile_schema({
    'type': 'object',
    'properties': {'force_complete': {'type': 'null'}},
    'required': ['force_complete'],
    'additionalProperties': False,
})
