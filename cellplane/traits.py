"""Traits cellplane itself puts on resource providers, beside the virt drivers' own.

``COMPUTE_STATUS_DISABLED`` (Nova's name): ``cellplane-manage service
disable`` sets it on the providers of a compute host whose service it
disables, and ``enable`` removes it. Every scheduler query forbids it, so
Placement never offers a disabled host; a compute agent's resource report
keeps it where it finds it (the operator's, not the driver's).

``CUSTOM_CELL_<NAME>`` (``cell_trait``): a compute agent with ``[cell]
name`` puts it on its providers with its other traits (no request more),
and says so in its node records (``CELL_TRAIT_STAT``). A request bound to
a cell (a move) then asks Placement for that cell's hosts only, once every
host the scheduler knows in the cell says it carries the trait; until then
(an agent not restarted since, no ``[cell] name``) the cell is left to the
scheduler's filters, as before. Without it, a move's random window of
candidates often lay wholly in another cell, and the move was scheduled a
second time over every host.
"""
from __future__ import annotations

import os_traits

COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED'

# Traits a compute agent's report never removes.
OPERATOR_TRAITS = frozenset({COMPUTE_STATUS_DISABLED})

# The node-record stat that names the cell trait a host's providers carry.
CELL_TRAIT_STAT = 'cell_trait'
# Placement's limit on a trait's name.
_TRAIT_MAX_LENGTH = 255


def cell_trait(cell_name: str | None) -> str | None:
    """The trait of the hosts of the cell named ``cell_name``; None without a name.

    ``os_traits.normalize_name`` (as Nova names its custom traits): upper
    case, each run of characters other than letters and digits made one
    ``_``, as Placement's custom traits must be.
    """
    if not cell_name or not cell_name.strip():
        return None
    return os_traits.normalize_name('CELL_' + cell_name.strip())[:_TRAIT_MAX_LENGTH]
