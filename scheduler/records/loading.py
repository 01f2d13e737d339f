"""Pick the scheduling-record backend ``[scheduler] record_backend`` names.

Backends are entry points of ``cellplane.scheduler.records``; ``none``
writes no records at all.
"""
from __future__ import annotations

from oslo_config import cfg
from stevedore import driver

from scheduler.records.backend import RecordBackend, RecordBackendError

NAMESPACE = 'cellplane.scheduler.records'
NO_RECORDS = 'none'


def load_backend(conf: cfg.ConfigOpts) -> RecordBackend | None:
    """The configured backend, None for ``none``; RecordBackendError if unusable."""
    name = conf.scheduler.record_backend
    if name == NO_RECORDS:
        return None
    try:
        manager = driver.DriverManager(NAMESPACE, name, invoke_on_load=False)
    except Exception as exc:  # stevedore raises NoMatches / RuntimeError variants
        raise RecordBackendError(
            f'[scheduler] record_backend = {name!r} is not an installed record '
            f'backend (namespace {NAMESPACE}; shipped: jsonlines, database, or '
            f'{NO_RECORDS})') from exc
    return manager.driver.from_conf(conf)
