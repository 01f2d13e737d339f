"""Turning payloads into JSON-safe primitives and back, at the edge of oslo.messaging.

Sending: a ``Payload`` becomes its envelope
``{"cellplane.name": ..., "cellplane.version": ..., "cellplane.data": ...}``
(lists and dicts of payloads are walked). Receiving: every envelope is looked
up in the payload registry, its version checked and its data validated; a
bad one is logged at ERROR, naming what was wrong, and raised as
``PayloadRejected`` so that oslo.messaging drops the message (and a caller
gets the error back) while the server goes on with the next one (see
``cellplane.rpc.rejections`` for what is logged).
"""
from __future__ import annotations

import logging
from typing import Any

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from cellplane.context import RequestContext
from cellplane.rpc import rejections
from cellplane.rpc.rejections import PayloadRejected  # re-exported

# isort: split
import oslo_messaging as messaging

from rpc_schemas import REGISTRY
from rpc_schemas.base import Payload
from rpc_schemas.errors import PayloadError
from rpc_schemas.registry import PayloadRegistry, is_envelope

LOG = logging.getLogger(__name__)


class PinnedPayload:
    """A payload to be sent at an older version (a client capped for an upgrade)."""

    def __init__(self, payload: Payload, version: str) -> None:
        self.payload = payload
        self.version = version
        payload.check_downgrade(version)  # fail at the sender, not the receiver


class PayloadSerializer(messaging.Serializer):
    """oslo.messaging serializer for cellplane payloads and request contexts."""

    def __init__(self, registry: PayloadRegistry = REGISTRY) -> None:
        self._registry = registry

    def serialize_entity(self, ctxt: Any, entity: Any) -> Any:
        if isinstance(entity, PinnedPayload):
            return entity.payload.to_primitive(target_version=entity.version)
        if isinstance(entity, Payload):
            return entity.to_primitive()
        if isinstance(entity, (list, tuple)):
            return [self.serialize_entity(ctxt, e) for e in entity]
        if isinstance(entity, dict):
            return {k: self.serialize_entity(ctxt, v) for k, v in entity.items()}
        return entity

    def deserialize_entity(self, ctxt: Any, entity: Any) -> Any:
        if is_envelope(entity):
            try:
                return self._registry.from_primitive(entity)
            except PayloadError as exc:
                reason = str(exc)
            # Logged outside the except block: oslo.log would append the
            # active exception to the line and say everything twice.
            LOG.error('Rejected an RPC message (request %s): %s',
                      getattr(ctxt, 'request_id', None), reason)
            raise PayloadRejected(reason)
        if isinstance(entity, list):
            return [self.deserialize_entity(ctxt, e) for e in entity]
        if isinstance(entity, dict):
            return {k: self.deserialize_entity(ctxt, v) for k, v in entity.items()}
        return entity

    def serialize_context(self, ctxt: Any) -> dict:
        if isinstance(ctxt, RequestContext):
            return ctxt.to_wire()
        if isinstance(ctxt, dict):
            return RequestContext.from_wire(ctxt, overwrite=False).to_wire()
        raise TypeError(f'RPC context must be a RequestContext, not {type(ctxt).__name__}')

    def deserialize_context(self, ctxt: Any) -> RequestContext:
        return RequestContext.from_wire(ctxt, overwrite=True)


rejections.install()
