"""Engines sized by the configuration: the connection budget of a process, per role.

Each database a process reaches has its own pool options (``pool_size``
kept between uses, ``max_overflow`` more for threads that waited 50 ms,
``pool_timeout``): ``[api_database]`` for the API database,
``[cell_databases]`` for each cell database a top-level process reaches
(one engine per cell, made when the cell is first read), ``[database]`` for
a cell conductor's own cell. Each role reads them from its own config file,
so the scheduler, the super conductor and cellplane-api are sized apart.
A pool that stays full raises ``engines.PoolExhausted`` naming the options
and the file they were read from. ARCHITECTURE.md "Connection budget" sums
them up per role.
"""
from __future__ import annotations

import functools
from typing import Callable

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane import config
from cellplane.db import engines


def options_named(conf: cfg.ConfigOpts, group: str) -> str:
    """``[group] pool_size, max_overflow (in file)``: what an exhausted pool names."""
    where = config.describe_location(conf, 'pool_size', group).strip()
    return f'[{group}] pool_size, max_overflow' + (f' {where}' if where else '')


def _sized(conf: cfg.ConfigOpts, group: str) -> dict:
    section = conf[group]
    return {'pool_size': section.pool_size, 'max_overflow': section.max_overflow,
            'pool_timeout': section.pool_timeout,
            'pool_options': options_named(conf, group)}


def api_engine(conf: cfg.ConfigOpts) -> Engine:
    """The API database's engine, sized by ``[api_database]``."""
    return engines.create_engine(conf.api_database.connection, **_sized(conf, 'api_database'))


def cell_engine_factory(conf: cfg.ConfigOpts, *,
                        connect_timeout: float | None = None) -> Callable[[str], Engine]:
    """What ``CellDatabases`` builds each cell's engine with, sized by ``[cell_databases]``."""
    return functools.partial(engines.create_engine, connect_timeout=connect_timeout,
                             **_sized(conf, 'cell_databases'))


def own_cell_engine(conf: cfg.ConfigOpts) -> Engine:
    """A cell conductor's engine to its own cell, sized by ``[database]``."""
    return engines.create_engine(conf.database.connection, **_sized(conf, 'database'))
