"""/resource_providers/{uuid}/aggregates."""
from __future__ import annotations

from placement import errors


def _todo(req):
    raise errors.NotFound('not yet implemented')


get_aggregates = set_aggregates = _todo
