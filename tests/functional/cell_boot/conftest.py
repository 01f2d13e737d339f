"""A cell DB, a real in-process Placement and a running cell for the boot-path tests."""
from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from cellplane.db import engines, migrate
from placement.client import PlacementClient
from tests.functional.cell_boot.harness import Cell

_templates: dict[str, str] = {}


def _migrated(kind: str) -> str:
    """A migrated SQLite file of ``kind`` (cell, placement), built once per session."""
    if kind not in _templates:
        path = os.path.join(tempfile.mkdtemp(prefix=f'cell-boot-{kind}-'), f'{kind}.db')
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync(kind, engine)
        engine.dispose()
        _templates[kind] = path
    return _templates[kind]


def _engine(tmp_path, kind: str):
    path = tmp_path / f'{kind}.db'
    shutil.copy(_migrated(kind), path)
    return engines.create_engine(f'sqlite:///{path}')


@pytest.fixture
def cell_engine(tmp_path):
    engine = _engine(tmp_path, 'cell')
    yield engine
    engine.dispose()


@pytest.fixture
def placement(tmp_path):
    engine = _engine(tmp_path, 'placement')
    yield PlacementClient.in_process(engine)
    engine.dispose()


@pytest.fixture
def cell_factory(cell_engine, placement):
    """Call it (optionally with max_attempts=) to get a running ``Cell``; stopped after."""
    made = []

    def make(**kwargs) -> Cell:
        cell = Cell(cell_engine, placement, **kwargs)
        made.append(cell)
        return cell
    yield make
    for cell in made:
        cell.stop()


@pytest.fixture
def cell(cell_factory) -> Cell:
    return cell_factory()
