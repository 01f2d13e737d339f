"""Run one cellplane database's Alembic history: ``db sync`` and its checks.

Three databases, three independent histories, each in its own folder and
with its own version table, so that they can never be confused even when an
operator points two of them at the same server:

    api        cellplane/db/api/migrations     (top level)
    cell       cellplane/db/cell/migrations    (one per cell)
    placement  placement/db/migrations         (the Placement service)

Alembic is imported by the function that uses it, not with this module:
every ``cellplane-manage`` command and daemon imports this module, and
Alembic's import (about a quarter of a second of CPU) is only needed by
the few that sync or compare a schema.
"""
from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy.engine import Engine

if TYPE_CHECKING:
    from alembic.config import Config


@dataclass(frozen=True)
class History:
    name: str
    package: str          # the package that holds migrations/
    version_table: str


HISTORIES = {
    'api': History('api', 'cellplane.db.api', 'cellplane_api_version'),
    'cell': History('cell', 'cellplane.db.cell', 'cellplane_cell_version'),
    'placement': History('placement', 'placement.db', 'cellplane_placement_version'),
}


class UnknownDatabase(ValueError):
    """``db sync`` was asked for a database that has no history."""


def history(name: str) -> History:
    try:
        return HISTORIES[name]
    except KeyError:
        raise UnknownDatabase(
            f'unknown database {name!r}; choose one of {", ".join(sorted(HISTORIES))}'
        ) from None


def _alembic_config(hist: History, engine: Engine) -> Config:
    from alembic.config import Config
    location = importlib.resources.files(hist.package) / 'migrations'
    cfg = Config()
    cfg.set_main_option('script_location', str(location))
    cfg.attributes['engine'] = engine
    cfg.attributes['version_table'] = hist.version_table
    return cfg


def sync(name: str, engine: Engine, revision: str = 'head') -> None:
    """Create or upgrade the schema of database ``name`` to ``revision``."""
    from alembic import command
    hist = history(name)
    command.upgrade(_alembic_config(hist, engine), revision)


def current_revision(name: str, engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext
    hist = history(name)
    with engine.connect() as conn:
        ctx = MigrationContext.configure(
            conn, opts={'version_table': hist.version_table})
        return ctx.get_current_revision()


def head_revision(name: str, engine: Engine) -> str | None:
    from alembic.script import ScriptDirectory
    hist = history(name)
    return ScriptDirectory.from_config(_alembic_config(hist, engine)).get_current_head()
