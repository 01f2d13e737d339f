"""What a handler knows about the request beyond HTTP: who, which DB, which id."""
from __future__ import annotations

from dataclasses import dataclass

from oslo_context import context as oslo_context
from sqlalchemy.engine import Engine


@dataclass(slots=True)
class RequestContext:
    engine: Engine
    # The caller (user, project, roles, scope) the policy judged; None for
    # the open version document at /.
    credentials: oslo_context.RequestContext | None
    request_id: str
    # [placement] randomize_allocation_candidates
    randomize_candidates: bool = False
