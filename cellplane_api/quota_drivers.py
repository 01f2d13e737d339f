"""The ``[quota] driver`` a process uses: ``database`` (``cellplane_api.quotas``) or ``unified_limits``.

Both offer what ``servers.create`` (``prepare`` before the project's quota
lock, ``counts_servers``: is the lock needed, ``check_servers`` and
``recheck_servers`` under it),
``server_groups.create`` (``check``: the ``GroupQuota``), os-quota-sets,
limits and ``cellplane quota`` call: ``limits``, ``defaults``, ``usage``,
``set_limits``, ``forget`` and ``settable`` (False when the limits are
Keystone's).
"""
from __future__ import annotations

from typing import Callable

from sqlalchemy.engine import Engine

from cellplane_api import quotas


def from_conf(conf, api_engine: Engine, placement: Callable | object):
    """The driver ``[quota] driver`` names, over the API database and Placement.

    ``placement`` is the Placement client or a function that makes it (the
    CLI's, made only when something must be counted there).
    """
    if conf.quota.driver == quotas.UNIFIED_LIMITS:
        from cellplane_api import unified_limits
        return unified_limits.from_conf(conf, api_engine, placement)
    return quotas.from_conf(conf, api_engine, placement)
