"""/resource_providers/{uuid}/inventories[/{resource_class}]."""
from __future__ import annotations

from placement import errors


def _todo(req):
    raise errors.NotFound('not yet implemented')


get_inventories = create_inventory = set_inventories = delete_inventories = _todo
get_inventory = update_inventory = delete_inventory = _todo
