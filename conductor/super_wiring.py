"""Building the super conductor's endpoint from its configuration (``cellplane-conductor``, role super).

The super conductor holds the API database (``[api_database] connection``),
the top-level bus (``[DEFAULT] transport_url``: the scheduler is called over
it) and a Placement client (``[placement]``: to remove the claim of an
instance it could not place). Each cell's database and bus come from the cell
mappings; engines and transports are built on first use and kept per cell.
"""
from __future__ import annotations

import dataclasses

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.cells.mappings import CellMapping
from cellplane.db.engines import DatabaseNotConfigured, create_engine
from cellplane.rpc.transport import TransportCache
from compute_agent.rpcapi import ComputeAPI
from conductor.super_manager import SuperConductorManager
from placement import client_conf
from scheduler.rpcapi import SchedulerAPI


@dataclasses.dataclass
class SuperConductorParts:
    manager: SuperConductorManager
    api_engine: Engine
    cells: CellDatabases
    cell_transports: TransportCache

    def close(self) -> None:
        self.cell_transports.cleanup()
        self.cells.dispose()
        self.api_engine.dispose()


def check_conf(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise the config error a super conductor cannot start with (before connecting)."""
    if not conf.api_database.connection:
        raise DatabaseNotConfigured(
            f'{service_name} (role super) needs [api_database] connection: it '
            f'reads build requests and cell mappings there'
            f'{config.describe_location(conf, "connection", "api_database")}')
    if not conf.placement.endpoint_url:
        raise client_conf.PlacementNotConfigured(
            f'{service_name} (role super) needs [placement] endpoint_url: it '
            f'removes the Placement claim of an instance it could not place')


def build(conf: cfg.ConfigOpts, top_transport, service_name: str) -> SuperConductorParts:
    """The super conductor's manager and what it holds, from ``conf``."""
    check_conf(conf, service_name)
    api_engine = create_engine(conf.api_database.connection)
    cells = CellDatabases(api_engine)
    transports = TransportCache(conf)
    clients: dict[str, ComputeAPI] = {}

    def compute_api_for(cell: CellMapping) -> ComputeAPI:
        client = clients.get(cell.transport_url)
        if client is None:
            client = ComputeAPI(transports.get(cell.transport_url), conf=conf)
            clients[cell.transport_url] = client
        return client

    manager = SuperConductorManager(
        api_engine=api_engine, cells=cells,
        scheduler=SchedulerAPI(top_transport, conf=conf),
        compute_api_for=compute_api_for,
        placement=client_conf.client_from_conf(conf, service_name),
        max_attempts=conf.conductor.max_attempts)
    return SuperConductorParts(manager=manager, api_engine=api_engine, cells=cells,
                               cell_transports=transports)
