"""``/os-aggregates`` read: list and show (``uuid`` from 2.41), as ``openstack hypervisor show`` reads them.

An aggregate as Nova shows it::

    {"id": 1, "uuid": "8f1c...", "name": "rack-a", "availability_zone": "az-a",
     "hosts": ["cell1-host1"], "metadata": {"availability_zone": "az-a"},
     "created_at": "2026-11-26T17:40:02.000000", "updated_at": "...",
     "deleted": false, "deleted_at": null}

Aggregates are written with ``cellplane aggregate`` (``cellplane/objects/aggregates.py``);
creating and changing them over HTTP is not served.
"""
from __future__ import annotations

from cellplane.objects import aggregates
from cellplane_api import errors
from cellplane_api.handlers.services import iso
from cellplane_api.policies import aggregates as rules
from cellplane_api.request import json_response


def _view(req, aggregate: aggregates.Aggregate) -> dict:
    doc = {'id': aggregate.id, 'name': aggregate.name,
           'availability_zone': aggregate.availability_zone,
           'hosts': list(aggregate.hosts), 'metadata': dict(aggregate.metadata),
           'created_at': iso(aggregate.created_at), 'updated_at': iso(aggregate.updated_at),
           'deleted': False, 'deleted_at': None}
    if req.mv >= (2, 41):
        doc['uuid'] = aggregate.uuid
    return doc


def list_aggregates(req):
    """``{"aggregates": [...]}``, by id."""
    req.authorize(rules.INDEX)
    found = sorted(aggregates.list_all(req.services.api_engine), key=lambda a: a.id)
    return json_response({'aggregates': [_view(req, a) for a in found]})


def show_aggregate(req):
    """``{"aggregate": {...}}``; the id is the integer one, as in Nova."""
    ident = req.urlvars['aggregate_id']
    if not ident.isdigit():
        raise errors.BadRequest('Invalid input received: id must be an integer')
    req.authorize(rules.SHOW)
    found = [a for a in aggregates.list_all(req.services.api_engine) if a.id == int(ident)]
    if not found:
        raise errors.NotFound(f'Aggregate {ident} could not be found.')
    return json_response({'aggregate': _view(req, found[0])})
