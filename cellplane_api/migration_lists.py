"""Migrations gathered from every cell at once, as ``GET /os-migrations`` lists them.

Each cell's database holds its own migrations (``cellplane/objects/migrations.py``);
they are read in parallel (``cellplane.cells.scatter_gather.gather``), each
cell with the filters asked, in SQL. A cell whose database fails or does not
answer within the cell timeout is left out and named in ``unread``, as
Nova's cross-cell migration list skips a cell that did not respond: the
other cells' migrations are still listed. Migration ids are per cell (as in
Nova with cells v2); the uuid is the one that is unique.
"""
from __future__ import annotations

import dataclasses
import logging
from typing import Callable

import sqlalchemy as sa

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import CellTimeout, gather
from cellplane.objects import migrations
from cellplane_api.moves import CellMigration

LOG = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class Filters:
    """What a list asks for; None: anything."""

    instance_uuid: str | None = None
    status: str | None = None
    host: str | None = None            # source or destination
    source_host: str | None = None
    migration_type: str | None = None


@dataclasses.dataclass(frozen=True)
class Gathered:
    """The migrations found, cell after cell (oldest first in each), and the cells not read."""

    found: list[CellMigration]
    unread: list[str]


def gather_migrations(cells: CellDatabases, filters: Filters, *,
                      cell_timeout: float) -> Gathered:
    """Every cell's migrations matching ``filters``; the cells that could not be read are named."""
    mappings = list(cells.reload())

    def reader(cell_uuid: str) -> Callable[[], list[migrations.Migration]]:
        def read() -> list[migrations.Migration]:
            with cells.engine(cell_uuid).connect() as conn:
                return migrations.find(
                    conn, instance_uuid=filters.instance_uuid,
                    statuses=None if filters.status is None else [filters.status],
                    host=filters.host, source_host=filters.source_host,
                    migration_type=filters.migration_type)
        return read

    answers = gather({m.uuid: reader(m.uuid) for m in mappings}, cell_timeout)
    found: list[CellMigration] = []
    unread: list[str] = []
    for mapping in mappings:
        answer = answers[mapping.uuid]
        if isinstance(answer, BaseException):
            if not isinstance(answer, (sa.exc.SQLAlchemyError, CellTimeout)):
                raise answer
            LOG.warning('Cell %s did not answer when listing migrations (%s: %s); its '
                        'migrations are left out', mapping.name, type(answer).__name__,
                        (str(answer).splitlines() or [''])[0])
            unread.append(mapping.name)
            continue
        found += [CellMigration(mapping.name, m) for m in answer]
    return Gathered(found, unread)
