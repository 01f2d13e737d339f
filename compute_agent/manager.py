"""The compute agent's RPC endpoint (API 1.0: no methods yet besides the diagnostics ping).

Later issues add ``build_and_run_instance`` and friends here.
"""
from __future__ import annotations

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
import oslo_messaging as messaging  # noqa: E402,I100


class ComputeManager:
    target = messaging.Target(version='1.0')
