"""The payloads' stored schemas as code, written by ``python -m rpc_schemas.write_schemas``.

One module per payload at its current version, each with ``validate(data)``
(fastjsonschema's) and ``SCHEMA_SHA256``, the digest of the schema it was
made from; ``rpc_schemas.base.compiled_check`` imports them.
"""
