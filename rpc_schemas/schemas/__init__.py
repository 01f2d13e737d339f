"""The stored JSON schema of every wire payload version (written by ``rpc_schemas/write_schemas.py``)."""
