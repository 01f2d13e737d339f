"""The wire contract: typed, versioned payloads and the registry that accepts them.

Importing this package registers every payload cellplane defines in
``rpc_schemas.registry.REGISTRY``.
"""
from rpc_schemas import (  # noqa: F401 - registers payloads
    build_attempt,
    compute_node,
    flavor,
    instance,
    instance_update,
    migration,
    ping,
    request_spec,
    selection,
    service_status,
)
from rpc_schemas.base import Payload, field  # noqa: F401
from rpc_schemas.registry import REGISTRY  # noqa: F401
