"""The compute agent's RPC client: what conductors import to reach an agent by host.

API versions:
    1.0 - (diagnostics ping only; builds come with later versions)
"""
from __future__ import annotations

from cellplane.rpc.client import RPCAPIClient

TOPIC = 'compute'


class ComputeAPI(RPCAPIClient):
    SERVICE = 'compute'
    TOPIC = TOPIC
    API_VERSION = '1.0'
