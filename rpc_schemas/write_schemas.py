"""Write the JSON Schema file of every registered payload at its current version, and its check as code.

Run ``python -m rpc_schemas.write_schemas`` after changing or adding a
payload; commit the new file(s). Files of older versions are left in place:
they document what older senders send.

Each current schema is also compiled to a Python module by fastjsonschema
(``rpc_schemas/compiled/``), which ``rpc_schemas.base.compiled_check``
imports instead of compiling the schema in every process. The module
records the digest of the schema it was made from.
"""
from __future__ import annotations

import json
import pathlib

import fastjsonschema

from rpc_schemas import REGISTRY
from rpc_schemas.base import compilable, compiled_module_name, schema_digest

SCHEMA_DIR = pathlib.Path(__file__).parent / 'schemas'
COMPILED_DIR = pathlib.Path(__file__).parent / 'compiled'


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + '\n'


def render_compiled(cls, schema: dict) -> str:
    """The module that checks ``schema`` (``validate(data)``), made by fastjsonschema."""
    return (f'"""The check of {cls.schema_filename()}, compiled by fastjsonschema '
            f'{fastjsonschema.VERSION}.\n\n'
            f'Written by ``python -m rpc_schemas.write_schemas``; do not edit.\n"""\n'
            f'# flake8: noqa\n'
            f'# ruff: noqa\n'
            f'SCHEMA_SHA256 = {schema_digest(schema)!r}\n\n'
            + fastjsonschema.compile_to_code(compilable(schema)))


def main() -> None:
    SCHEMA_DIR.mkdir(exist_ok=True)
    COMPILED_DIR.mkdir(exist_ok=True)
    for cls in REGISTRY.classes():
        schema = cls.json_schema()
        path = SCHEMA_DIR / cls.schema_filename()
        path.write_text(render(schema), encoding='utf-8')
        print(path)
        module = COMPILED_DIR / f'{compiled_module_name(cls).rsplit(".", 1)[1]}.py'
        module.write_text(render_compiled(cls, schema), encoding='utf-8')
        print(module)


if __name__ == '__main__':
    main()
