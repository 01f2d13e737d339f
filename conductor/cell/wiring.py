"""The one way to build a cell conductor: from its configuration and resolved dependencies.

``cellplane-conductor`` with ``[conductor] role = cell`` (``conductor/cmd.py``),
the embedded mode and the test harnesses all call ``build_cell_conductor``;
they differ only in what they hand it: the cell's bus, the cell's database
engine and a Placement client (it unclaims failed hosts and claims the
alternates it reschedules to). Nothing of the top level: ``cellplane.cell_guard``
refuses a daemon configured with it, and the builder takes none of it.

The returned ``CellConductor`` is not started. Its service serves the cell
conductor's API (namespace ``cell_conductor``) and the 1.x conductor API of
older agents (``conductor/legacy.py``), records its own heartbeat in its
cell database every ``[service] report_interval``, and every ``[conductor]
stalled_build_check_interval`` moves the builds of hosts that went down and
those older than ``[conductor] build_timeout``
(``conductor/cell/stalled_builds.py``), and as often completes the
evacuations whose source host is up again without having cleaned up
(``CellMoves.clean_returned_sources``); every ``[conductor]
stalled_move_check_interval`` it finishes or rolls back the moves without
progress for ``[conductor] move_timeout`` (``conductor/cell/stalled_moves.py``).
"""
from __future__ import annotations

import dataclasses

import prometheus_client
from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.context import new_context
from cellplane.heartbeat import current_status
from cellplane.objects import services
from cellplane.periodic import PeriodicTask
from cellplane.service import Service
from compute_agent.rpcapi import ComputeAPI
from conductor import conf as conductor_conf
from conductor import metrics
from conductor.cell import rpcapi
from conductor.cell.manager import CellConductorManager
from conductor.cell.moves import CellMoves
from conductor.cell.reschedule import Rescheduler
from conductor.cell.stalled_builds import StalledBuilds
from conductor.cell.stalled_moves import StalledMoves
from conductor.legacy import LegacyConductorEndpoint
from placement import client_conf
from placement.client import PlacementClient

# Seconds between two tries of the allocation removals Placement could not take.
PENDING_UNCLAIMS_INTERVAL = 10.0

BINARY = 'cellplane-conductor'


@dataclasses.dataclass
class CellConductor:
    """A built cell conductor: its ``Service``, its manager and its check for stalled builds."""

    service: Service
    manager: CellConductorManager
    stalled_builds: StalledBuilds


def check_conf(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise the config error a cell conductor cannot start with (before connecting)."""
    # A Keystone user (auth_type) finds Placement in the service catalog.
    if not conf.placement.endpoint_url and not conf.placement.auth_type:
        raise client_conf.PlacementNotConfigured(
            f'{service_name} (role cell) needs [placement] endpoint_url (or auth_type '
            f'and its Keystone options): it removes '
            f'the claim of a failed build and claims the alternates it reschedules to')


def build_cell_conductor(conf: cfg.ConfigOpts, *, transport, engine: Engine,
                         placement: PlacementClient, host: str | None = None,
                         owns_transport: bool = True) -> CellConductor:
    """A cell conductor on ``transport`` (its cell's bus) over ``engine``, not started."""
    compute = ComputeAPI(transport, conf=conf)
    rescheduler = Rescheduler(engine=engine, placement=placement, compute=compute,
                              max_attempts=conf.conductor.max_attempts,
                              service_down_time=conf.service.service_down_time,
                              database_retry_timeout=conf.conductor.database_retry_timeout)
    moves = CellMoves(engine=engine, placement=placement, compute=compute,
                      max_attempts=conf.conductor.max_attempts,
                      service_down_time=conf.service.service_down_time)
    manager = CellConductorManager(engine=engine, rescheduler=rescheduler, compute=compute,
                                   moves=moves,
                                   database_retry_timeout=conf.conductor.database_retry_timeout)
    host = host or conf.host

    def heartbeat() -> None:
        # The cell conductor is in its own cell DB's services table too.
        services.record_heartbeat(
            engine, current_status(conf, binary=BINARY, topic=rpcapi.TOPIC, host=host))

    stalled_builds = StalledBuilds(engine=engine, rescheduler=rescheduler,
                                   service_down_time=conf.service.service_down_time,
                                   build_timeout=conf.conductor.build_timeout,
                                   build_start_timeout=conf.conductor.build_start_timeout,
                                   mass_silence_threshold=(
                                       conf.conductor.mass_silence_threshold))
    if conf.metrics.bind_port:
        # Only where this process serves /metrics: several cell conductors in
        # one process (the embedded mode) would register the same series.
        prometheus_client.REGISTRY.register(metrics.ComputeHeartbeats(
            engine, conf.cell.name or host, conf.service.service_down_time))
    periodic = []
    # Allocations of instances in ERROR Placement could not remove at once.
    periodic.append(PeriodicTask(f'{host}-pending-unclaims', PENDING_UNCLAIMS_INTERVAL,
                                 rescheduler.pending.retry))
    if conf.conductor.stalled_build_check_interval:
        periodic.append(PeriodicTask(f'{host}-stalled-builds',
                                     conf.conductor.stalled_build_check_interval,
                                     stalled_builds.check))
        # Evacuations whose source came back without cleaning up (as often).
        periodic.append(PeriodicTask(f'{host}-returned-sources',
                                     conf.conductor.stalled_build_check_interval,
                                     lambda: moves.clean_returned_sources(new_context())))
    if conf.conductor.move_timeout:
        stalled_moves = StalledMoves(engine=engine, moves=moves, compute=compute,
                                     move_timeout=conf.conductor.move_timeout)
        periodic.append(PeriodicTask(f'{host}-stalled-moves',
                                     conf.conductor.stalled_move_check_interval,
                                     stalled_moves.check))
    service = Service(
        conf, binary=BINARY, topic=rpcapi.TOPIC, transport=transport,
        endpoints=[manager, LegacyConductorEndpoint(conductor_conf.ROLE_CELL, manager)],
        heartbeat=heartbeat, periodic_tasks=periodic, host=host,
        owns_transport=owns_transport)
    return CellConductor(service=service, manager=manager, stalled_builds=stalled_builds)
