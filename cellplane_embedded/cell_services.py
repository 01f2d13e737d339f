"""A cell's conductor in the embedded mode: its endpoints, from the classes ``cellplane-conductor`` (role cell) wires.

A cell's services get the cell's bus, its database (the conductor only) and
Placement; never the top level's. (The compute agents are built by
``compute_agent.wiring.build_compute_agent``, as the daemon builds them.)
"""
from __future__ import annotations

from oslo_config import cfg
from sqlalchemy.engine import Engine

from compute_agent.rpcapi import ComputeAPI
from conductor.cell_manager import CellConductorManager
from conductor.cell_reschedule import Rescheduler
from conductor.manager import ConductorManager
from placement.client import PlacementClient


def cell_conductor_endpoints(*, conf: cfg.ConfigOpts, engine: Engine, transport,
                             placement: PlacementClient) -> list[object]:
    """The cell conductor's endpoints: heartbeats, agents' reports, reschedules."""
    rescheduler = Rescheduler(engine=engine, placement=placement,
                              compute=ComputeAPI(transport, conf=conf),
                              max_attempts=conf.conductor.max_attempts)
    return [ConductorManager(role='cell', cell_engine=engine),
            CellConductorManager(engine=engine, rescheduler=rescheduler)]
