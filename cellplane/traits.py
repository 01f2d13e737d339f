"""Traits cellplane itself puts on resource providers, beside the virt drivers' own.

``COMPUTE_STATUS_DISABLED`` (Nova's name): ``cellplane-manage service
disable`` sets it on the providers of a compute host whose service it
disables, and ``enable`` removes it. Every scheduler query forbids it, so
Placement never offers a disabled host; a compute agent's resource report
keeps it where it finds it (the operator's, not the driver's).
"""
from __future__ import annotations

COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED'

# Traits a compute agent's report never removes.
OPERATOR_TRAITS = frozenset({COMPUTE_STATUS_DISABLED})
