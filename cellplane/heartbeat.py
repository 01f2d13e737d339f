"""What a daemon says about itself in its heartbeat: its ``ServiceStatus``."""
from __future__ import annotations

import datetime
import functools
import importlib.metadata

from oslo_config import cfg

from rpc_schemas.service_status import ServiceStatus


@functools.lru_cache(maxsize=1)
def software_version() -> str:
    try:
        return importlib.metadata.version('cellplane')
    except importlib.metadata.PackageNotFoundError:
        return 'unknown'


def current_status(conf: cfg.ConfigOpts, *, binary: str, topic: str,
                   host: str | None = None) -> ServiceStatus:
    """This service's status now: host (``[DEFAULT] host`` unless given), binary, topic, cell, version, report time."""
    return ServiceStatus(
        host=host or conf.host, binary=binary, topic=topic, cell_name=conf.cell.name,
        version=software_version(),
        report_time=datetime.datetime.now(datetime.timezone.utc))
