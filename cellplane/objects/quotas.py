"""Quota overrides in the API DB (``quotas``): a project's limit of a resource where it differs from the default.

The defaults are the ``[quota]`` options (``cellplane_api/conf.py``); a row
here replaces one resource's default for one project, as Nova's
``quotas`` table does. -1 is unlimited. What this module promises:

- ``overrides`` reads a project's rows (resource -> limit), on an engine or
  inside the caller's transaction;
- ``set_limits`` writes several resources at once (insert or update), and
  ``forget`` removes every override of a project (back to the defaults).
"""
from __future__ import annotations

from typing import Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from cellplane.db.api.models import quotas

# Read by every server create: built once (see cellplane/objects/flavors.py's _BY_ID).
_OVERRIDES = sa.select(quotas.c.resource, quotas.c.hard_limit).where(
    quotas.c.project_id == sa.bindparam('b_project'))


def overrides(db: Engine | Connection, project_id: str) -> dict[str, int]:
    """Resource -> the project's own limit, for the resources it has one for."""
    params = {'b_project': project_id}
    if isinstance(db, Connection):
        return {row[0]: row[1] for row in db.execute(_OVERRIDES, params)}
    with db.connect() as conn:
        return {row[0]: row[1] for row in conn.execute(_OVERRIDES, params)}


def set_limits(engine: Engine, project_id: str, limits: Mapping[str, int]) -> None:
    """Give the project these limits (the others keep theirs), in one transaction."""
    with engine.begin() as conn:
        for resource, limit in limits.items():
            changed = conn.execute(quotas.update().where(
                quotas.c.project_id == project_id, quotas.c.resource == resource).values(
                    hard_limit=limit, updated_at=sa.func.now())).rowcount
            if changed:
                continue
            try:
                with conn.begin_nested():
                    conn.execute(quotas.insert().values(project_id=project_id,
                                                        resource=resource, hard_limit=limit))
            except sa.exc.IntegrityError:
                # Another writer inserted it meanwhile: the last write wins, as an update.
                conn.execute(quotas.update().where(
                    quotas.c.project_id == project_id, quotas.c.resource == resource).values(
                        hard_limit=limit, updated_at=sa.func.now()))


def forget(engine: Engine, project_id: str) -> int:
    """Remove the project's overrides (its limits are the defaults again); how many there were."""
    with engine.begin() as conn:
        return conn.execute(quotas.delete().where(quotas.c.project_id == project_id)).rowcount
