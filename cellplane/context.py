"""The request context carried on every RPC message: who asked, and which request.

``RequestContext`` extends oslo.context's, so oslo.log puts the request id
on every log line written while the request is handled (the threading
executor runs each message in a thread, and receiving a context makes it the
thread's current one). On the wire only the identity fields travel, never a
token: ``request_id``, ``global_request_id``, ``user_id``, ``project_id``.
"""
from __future__ import annotations

import re
from typing import Any

from oslo_context import context as oslo_context

_REQUEST_ID_RE = re.compile(
    r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
WIRE_FIELDS = ('request_id', 'global_request_id', 'user_id', 'project_id')


def generate_request_id() -> str:
    """A new request id, ``req-<uuid4>``."""
    return oslo_context.generate_request_id()


def is_request_id(value: Any) -> bool:
    return isinstance(value, str) and bool(_REQUEST_ID_RE.match(value))


class RequestContext(oslo_context.RequestContext):
    """Identity and request id of the work a message is part of."""

    def to_wire(self) -> dict[str, str | None]:
        return {name: getattr(self, name) for name in WIRE_FIELDS}

    @classmethod
    def from_wire(cls, values: Any, *, overwrite: bool = True) -> 'RequestContext':
        """Rebuild a context from a message; a missing or bad request id gets a new one.

        Foreign or damaged contexts must not stop a message from being handled:
        anything that is not a string is dropped, and the request id is kept only
        if it looks like one we generate (so log lines stay greppable).
        """
        values = values if isinstance(values, dict) else {}
        clean = {k: values.get(k) for k in WIRE_FIELDS
                 if isinstance(values.get(k), str)}
        request_id = clean.pop('request_id', None)
        global_request_id = clean.pop('global_request_id', None)
        return cls(
            request_id=request_id if is_request_id(request_id) else None,
            global_request_id=(global_request_id
                               if is_request_id(global_request_id) else None),
            overwrite=overwrite, **clean)


def new_context(*, user_id: str | None = None, project_id: str | None = None,
                overwrite: bool = False) -> RequestContext:
    """A fresh context for work a service starts on its own (heartbeats, CLI)."""
    return RequestContext(user_id=user_id, project_id=project_id, overwrite=overwrite)
