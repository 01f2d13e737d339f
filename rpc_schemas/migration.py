"""Migration: a move of one instance between hosts of its cell, as the hosts and the cell conductor need it.

The cell database's ``migrations`` row is the record (its status, the
destination tried now, the error); this payload is what travels with the
move: which migration (its uuid is also the Placement consumer holding the
source host's allocation), what kind, where from, and the flavors before
and after. The destination is the first Selection of the host list that
travels beside it.
"""
from __future__ import annotations

import dataclasses

from rpc_schemas.base import Payload, field
from rpc_schemas.flavor import Flavor
from rpc_schemas.registry import register

MIGRATION = 'migration'
RESIZE = 'resize'
LIVE_MIGRATION = 'live-migration'
EVACUATION = 'evacuation'


@register
@dataclasses.dataclass(frozen=True)
class Migration(Payload):
    NAME = 'Migration'
    VERSION = '1.0'
    DESCRIPTION = ('A move of one instance between hosts of its cell: the migration '
                   '(and Placement consumer) uuid, its kind, its source, its flavors.')

    uuid: str = field(minLength=36, maxLength=36)
    instance_uuid: str = field(minLength=36, maxLength=36)
    migration_type: str = field(enum=[MIGRATION, RESIZE, LIVE_MIGRATION, EVACUATION])
    source_host: str = field(minLength=1, maxLength=255)
    source_node: str = field(minLength=1, maxLength=255)
    old_flavor: Flavor
    new_flavor: Flavor
