"""What a handler knows about the request beyond HTTP: who, which DB, which id."""
from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.engine import Engine

from placement.auth import Identity


@dataclass(slots=True)
class RequestContext:
    engine: Engine
    identity: Identity
    request_id: str
    # [placement] randomize_allocation_candidates
    randomize_candidates: bool = False
