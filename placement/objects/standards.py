"""Make sure every standard resource class and trait is in the database.

Run at start-up; idempotent, and two cheap SELECTs when nothing is missing.
Safe against a concurrent start-up (a lost race is retried once).
"""
from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from placement.objects import resource_class, trait


def sync(engine: Engine) -> None:
    for attempt in (1, 2):
        try:
            with engine.begin() as conn:
                resource_class.sync_standard(conn)
                trait.sync_standard(conn)
            return
        except sa.exc.IntegrityError:
            if attempt == 2:
                raise
