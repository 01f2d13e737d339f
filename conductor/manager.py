"""The conductor's RPC endpoint: what a conductor does when a message arrives.

Foundation scope: a cell conductor records the heartbeats of its cell's
services. (``ping`` is answered for every daemon by the diagnostics
endpoint the service runner adds.)
"""
from __future__ import annotations

import logging

from sqlalchemy.engine import Engine

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from conductor import service_records
import oslo_messaging as messaging  # noqa: E402,I100
from rpc_schemas.service_status import ServiceStatus

LOG = logging.getLogger(__name__)


class ConductorManager:
    target = messaging.Target(version='1.0')

    def __init__(self, *, role: str, cell_engine: Engine | None) -> None:
        self.role = role
        self.cell_engine = cell_engine

    def service_heartbeat(self, ctxt, status: ServiceStatus) -> None:
        if not isinstance(status, ServiceStatus):
            LOG.error('Rejected service_heartbeat: expected a ServiceStatus payload, '
                      'got %s', type(status).__name__)
            return
        if self.cell_engine is None:
            LOG.error('Rejected service_heartbeat from %s %s: this %s conductor has '
                      'no cell database; heartbeats go to the cell conductor',
                      status.binary, status.host, self.role)
            return
        service_records.record_heartbeat(self.cell_engine, status)
        LOG.debug('Heartbeat of %s on %s recorded', status.binary, status.host)
