"""Write the JSON Schema file of every registered payload at its current version.

Run ``python -m rpc_schemas.write_schemas`` after changing or adding a
payload; commit the new file(s). Files of older versions are left in place:
they document what older senders send.
"""
from __future__ import annotations

import json
import pathlib

from rpc_schemas import REGISTRY

SCHEMA_DIR = pathlib.Path(__file__).parent / 'schemas'


def render(schema: dict) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + '\n'


def main() -> None:
    SCHEMA_DIR.mkdir(exist_ok=True)
    for cls in REGISTRY.classes():
        path = SCHEMA_DIR / cls.schema_filename()
        path.write_text(render(cls.json_schema()), encoding='utf-8')
        print(path)


if __name__ == '__main__':
    main()
