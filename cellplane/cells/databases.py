"""Engines for the cell databases, one per cell mapping of the API database.

The top level reaches each cell's database downward (the scheduler reads
compute nodes, the super conductor creates instances). ``CellDatabases``
keeps one engine per cell, built from the cell mappings: ``reload`` re-reads
the mappings (a daemon's SIGHUP), builds engines for new cells, and disposes
of the engines of cells that were removed or whose connection changed. A
cell unknown at the last reload is looked up once more before it is refused,
so an instance placed in a freshly mapped cell does not wait for a SIGHUP.
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from sqlalchemy.engine import Engine

from cellplane.db import away, engines
from cellplane.objects import cell_mappings
from cellplane.objects.cell_mappings import CellMapping

LOG = logging.getLogger(__name__)

EngineFactory = Callable[[str], Engine]


class UnknownCell(Exception):
    """No cell mapping has this UUID: the cell was deleted, or never mapped."""


class CellDatabases:
    """Cell UUID -> mapping and engine; thread-safe; ``reload`` follows the API DB."""

    def __init__(self, api_engine: Engine, *,
                 engine_factory: EngineFactory = engines.create_engine) -> None:
        self._api_engine = api_engine
        self._engine_factory = engine_factory
        self._lock = threading.Lock()
        self._mappings: dict[str, CellMapping] = {}
        self._loaded = False
        self._engines: dict[str, Engine] = {}

    @property
    def api_engine(self) -> Engine:
        """The API database the mappings are read from."""
        return self._api_engine

    def reload(self) -> list[CellMapping]:
        """Re-read the cell mappings; return them (enabled and disabled).

        Read again once, on a fresh connection, if the server dropped the first.
        """
        fresh = {m.uuid: m for m in away.again_if_dropped(
            lambda: cell_mappings.list_all(self._api_engine))}
        stale: list[Engine] = []
        with self._lock:
            for uuid in list(self._engines):
                old, new = self._mappings.get(uuid), fresh.get(uuid)
                if new is None or old is None \
                        or new.database_connection != old.database_connection:
                    stale.append(self._engines.pop(uuid))
            added = sorted(set(fresh) - set(self._mappings))
            removed = sorted(set(self._mappings) - set(fresh))
            self._mappings = fresh
        for engine in stale:
            engine.dispose()
        if added or removed:
            # The first read is not news (every command makes one): only a
            # change seen by a long-running reader is worth an INFO line.
            level = logging.INFO if self._loaded else logging.DEBUG
            LOG.log(level, 'Cell mappings: %d cell(s); added %s; removed %s', len(fresh),
                    ', '.join(fresh[u].name for u in added) or 'none',
                    ', '.join(removed) or 'none')
        self._loaded = True
        return list(fresh.values())

    def mapping(self, cell_uuid: str) -> CellMapping:
        """The mapping of ``cell_uuid``; re-reads the mappings once if unknown."""
        with self._lock:
            found = self._mappings.get(cell_uuid)
        if found is None:
            self.reload()
            with self._lock:
                found = self._mappings.get(cell_uuid)
        if found is None:
            raise UnknownCell(
                f'no cell mapping with uuid {cell_uuid} in the API database; '
                f'see `cellplane-manage cell list`')
        return found

    def engine(self, cell_uuid: str) -> Engine:
        """The engine of the cell's database, built on first use."""
        mapping = self.mapping(cell_uuid)
        with self._lock:
            engine = self._engines.get(cell_uuid)
            if engine is None:
                engine = self._engine_factory(mapping.database_connection)
                self._engines[cell_uuid] = engine
            return engine

    def enabled(self) -> list[CellMapping]:
        """The cells new instances may go to, as of the last reload."""
        with self._lock:
            return [m for m in self._mappings.values() if not m.disabled]

    def enabled_engines(self) -> dict[str, Engine]:
        """Cell UUID -> engine, for every enabled cell."""
        return {m.uuid: self.engine(m.uuid) for m in self.enabled()}

    def dispose(self) -> None:
        with self._lock:
            engines_ = list(self._engines.values())
            self._engines.clear()
        for engine in engines_:
            engine.dispose()
