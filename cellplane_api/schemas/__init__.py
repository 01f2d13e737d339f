"""Request bodies' JSON schemas, one module per resource, compiled with fastjsonschema (``validate``)."""
from __future__ import annotations

import fastjsonschema

from cellplane_api import errors


def compile_schema(schema: dict):
    return fastjsonschema.compile(schema)


def validate(validator, body) -> None:
    """400 naming the field, in Nova's words, when ``body`` does not match."""
    try:
        validator(body)
    except fastjsonschema.JsonSchemaValueException as exc:
        field = (exc.name or 'data').removeprefix('data').lstrip('.') or 'body'
        message = exc.message.removeprefix(exc.name or '').strip()
        raise errors.BadRequest(f'Invalid input for field/attribute {field}. '
                                f'Value: {exc.value!r}. {message}'.replace('\n', ' ')) from None
