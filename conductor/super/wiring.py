"""The one way to build a super conductor: from its configuration and resolved dependencies.

``cellplane-conductor`` with ``[conductor] role = super`` (``conductor/cmd.py``),
the embedded mode and the test harnesses all call ``build_super_conductor``.
It takes the top-level bus (the scheduler is called over it), the API
database's engine, the cells' databases (``CellDatabases``, from the cell
mappings), a function giving the bus of a cell from its mapping's transport
URL (the daemon's opens and keeps one transport per URL; the embedded mode's
returns its in-memory buses) and a Placement client (to remove the claim of
an instance it could not place).

The returned ``SuperConductor`` is not started. Its service serves the
super conductor's API (namespace ``super_conductor``) and the 1.x conductor
API of older API roles (``conductor/legacy.py``).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane import config
from cellplane.cells.databases import CellDatabases
from cellplane.db.engines import DatabaseNotConfigured
from cellplane.heartbeat import current_status
from cellplane.objects import services
from cellplane.objects.cell_mappings import CellMapping
from cellplane.periodic import PeriodicTask
from cellplane.service import Service
from compute_agent.rpcapi import ComputeAPI
from conductor import conf as conductor_conf
from conductor.cell.rpcapi import CellConductorAPI
from conductor.legacy import LegacyConductorEndpoint
from conductor.super import rpcapi
from conductor.super.manager import SuperConductorManager
from conductor.super.moves import SuperMoves
from conductor.super.placement_audit import PeriodicAudit
from conductor.super.resume import Resumption
from conductor.super.resume_moves import MoveResumption
from placement import client_conf
from placement.client import PlacementClient
from scheduler.rpcapi import SchedulerAPI

# Seconds between two tries of the allocation removals Placement could not take.
PENDING_UNCLAIMS_INTERVAL = 10.0

BINARY = 'cellplane-conductor'


@dataclasses.dataclass
class SuperConductor:
    """A built super conductor: its ``Service``, its manager and its resumption of lost boots."""

    service: Service
    manager: SuperConductorManager
    resumption: Resumption


def check_conf(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise the config error a super conductor cannot start with (before connecting)."""
    if not conf.api_database.connection:
        raise DatabaseNotConfigured(
            f'{service_name} (role super) needs [api_database] connection: it '
            f'reads build requests and cell mappings there'
            f'{config.describe_location(conf, "connection", "api_database")}')
    # A Keystone user (auth_type) finds Placement in the service catalog.
    if not conf.placement.endpoint_url and not conf.placement.auth_type:
        raise client_conf.PlacementNotConfigured(
            f'{service_name} (role super) needs [placement] endpoint_url (or '
            f'auth_type and its Keystone options): it '
            f'removes the Placement claim of an instance it could not place')


def build_super_conductor(conf: cfg.ConfigOpts, *, transport, api_engine: Engine,
                          cells: CellDatabases, cell_transport: Callable[[str], object],
                          placement: PlacementClient, host: str | None = None,
                          owns_transport: bool = True) -> SuperConductor:
    """A super conductor on ``transport`` (the top-level bus), not started."""
    clients: dict[str, ComputeAPI] = {}

    def compute_api_for(cell: CellMapping) -> ComputeAPI:
        client = clients.get(cell.transport_url)
        if client is None:
            client = ComputeAPI(cell_transport(cell.transport_url), conf=conf)
            clients[cell.transport_url] = client
        return client

    cell_conductors: dict[str, CellConductorAPI] = {}

    def cell_conductor_for(cell: CellMapping) -> CellConductorAPI:
        client = cell_conductors.get(cell.transport_url)
        if client is None:
            client = CellConductorAPI(cell_transport(cell.transport_url), conf=conf)
            cell_conductors[cell.transport_url] = client
        return client

    scheduler = SchedulerAPI(transport, conf=conf)
    moves = SuperMoves(api_engine=api_engine, cells=cells, scheduler=scheduler,
                       cell_conductor_for=cell_conductor_for,
                       compute_api_for=compute_api_for, placement=placement,
                       num_alternates=conf.conductor.max_attempts - 1,
                       allow_resize_to_same_host=conf.conductor.allow_resize_to_same_host)
    manager = SuperConductorManager(
        api_engine=api_engine, cells=cells,
        scheduler=scheduler, moves=moves,
        compute_api_for=compute_api_for, placement=placement,
        max_attempts=conf.conductor.max_attempts,
        scheduler_retry_timeout=conf.conductor.scheduler_retry_timeout,
        cell_write_retry_timeout=conf.conductor.cell_write_retry_timeout,
        database_retry_timeout=conf.conductor.database_retry_timeout,
        host=host or conf.host)
    resumption = Resumption(
        manager, api_engine=api_engine, cells=cells, binary=BINARY,
        service_down_time=conf.service.service_down_time,
        unleased_for=conf.conductor.resume_unleased_after)
    host = host or conf.host

    def heartbeat() -> None:
        # A top-level service: its liveness row is in the API database.
        services.record_heartbeat(api_engine, current_status(
            conf, binary=BINARY, topic=rpcapi.TOPIC, host=host))

    periodic = []
    if conf.conductor.resume_interval:
        periodic.append(PeriodicTask('resume-build-requests',
                                     conf.conductor.resume_interval,
                                     resumption.run))
        # Queued moves nobody schedules (their super conductor died).
        move_resumption = MoveResumption(moves, cells=cells, placement=placement,
                                         resume_after=conf.conductor.move_resume_after)
        periodic.append(PeriodicTask('resume-moves', conf.conductor.resume_interval,
                                     move_resumption.run))
    if conf.conductor.resize_confirm_window:
        window = conf.conductor.resize_confirm_window
        periodic.append(PeriodicTask('confirm-resizes', conf.conductor.resize_confirm_interval,
                                     lambda: moves.confirm_expired(window)))
    # Claims of failed or deleted boots Placement could not remove at once.
    periodic.append(PeriodicTask('pending-unclaims', PENDING_UNCLAIMS_INTERVAL,
                                 manager.pending.retry))
    if conf.conductor.placement_audit_interval:
        audit = PeriodicAudit(api_engine, cells, placement,
                              grace=conf.conductor.placement_audit_grace)
        periodic.append(PeriodicTask('placement-audit',
                                     conf.conductor.placement_audit_interval, audit.run))
    service = Service(
        conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
        endpoints=[manager, LegacyConductorEndpoint(conductor_conf.ROLE_SUPER, manager)],
        heartbeat=heartbeat, periodic_tasks=periodic, host=host,
        owns_transport=owns_transport)
    return SuperConductor(service=service, manager=manager, resumption=resumption)
