"""Building the cell conductor's boot-flow endpoint from its configuration (``cellplane-conductor``, role cell).

The cell conductor holds its cell DB (``[database] connection``), its cell
bus (``[DEFAULT] transport_url``: it casts builds to its agents over it) and
a Placement client (``[placement]``: it unclaims failed hosts and claims
alternates). Nothing of the top level: ``cellplane.cell_guard`` refuses it.
"""
from __future__ import annotations

from oslo_config import cfg
from sqlalchemy.engine import Engine

from compute_agent.rpcapi import ComputeAPI
from conductor.cell_manager import CellConductorManager
from conductor.cell_reschedule import Rescheduler
from placement import client_conf


def check_conf(conf: cfg.ConfigOpts, service_name: str) -> None:
    """Raise the config error a cell conductor cannot start with (before connecting)."""
    if not conf.placement.endpoint_url:
        raise client_conf.PlacementNotConfigured(
            f'{service_name} (role cell) needs [placement] endpoint_url: it removes '
            f'the claim of a failed build and claims the alternates it reschedules to')


def build(conf: cfg.ConfigOpts, cell_transport, cell_engine: Engine,
          service_name: str) -> CellConductorManager:
    """The cell conductor's boot-flow endpoint, from ``conf``."""
    placement = client_conf.client_from_conf(conf, service_name)
    rescheduler = Rescheduler(engine=cell_engine, placement=placement,
                              compute=ComputeAPI(cell_transport, conf=conf),
                              max_attempts=conf.conductor.max_attempts)
    return CellConductorManager(engine=cell_engine, rescheduler=rescheduler)
