"""``/os-services``: list (filters ``host``, ``binary``), enable, disable, force down, delete.

A service as listed (``forced_down`` from 2.11; ``id`` the row's integer
below 2.53, its uuid from 2.53)::

    {"id": "5e7c...", "binary": "cellplane-compute", "host": "cell1-host1",
     "zone": "nova", "status": "enabled", "state": "up",
     "updated_at": "2026-11-26T17:40:02.000000", "disabled_reason": null,
     "forced_down": false}

Below 2.53 changes are actions naming host and binary: ``PUT
/os-services/enable``, ``/disable``, ``/disable-log-reason`` and (2.11)
``/force-down``, each answering the fields it changed. From 2.53 ``PUT
/os-services/{uuid}`` with ``status``, ``disabled_reason`` and
``forced_down``, answering the whole service. As in Nova only compute
services can be changed. The change itself is
``cellplane_api/compute_services.py``'s, the one ``cellplane-manage
service`` makes. Services are read from the API database (schedulers,
super conductors) and every cell; a cell that cannot be read within
``[cells] read_timeout`` is left out of the list below 2.69; from 2.69 each
host mapped to it is listed as Nova lists a down cell's compute services,
``{"binary", "host", "status": "UNKNOWN"}``.
"""
from __future__ import annotations

import logging
import uuid as uuidlib

from cellplane.objects import cell_mappings, host_mappings
from cellplane.objects import services as service_rows
from cellplane_api import compute_services, errors
from cellplane_api.availability_zones import Zones
from cellplane_api.policies import services as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import services as schemas
from cellplane_api.schemas import validate

LOG = logging.getLogger(__name__)
COMPUTE_BINARY = compute_services.COMPUTE_BINARY


def iso(moment) -> str | None:
    """A database time as Nova writes it: ``2026-11-26T17:40:02.000000``."""
    return moment.strftime('%Y-%m-%dT%H:%M:%S.%f') if moment is not None else None


def is_uuid(text: str) -> bool:
    try:
        uuidlib.UUID(text)
    except ValueError:
        return False
    return True


def found_services(req) -> compute_services.Found:
    services = req.services
    return compute_services.locate(services.api_engine, services.cells, services.cell_timeout)


def zones_of(req, found: compute_services.Found) -> Zones:
    engines = {id(one.engine): one.engine for one in found.services if one.cell is not None}
    return Zones.read(req.services.api_engine, engines.values(),
                      default=req.services.default_zone, internal=req.services.internal_zone)


def is_up(req, row: dict) -> bool:
    return service_rows.is_up(row, service_down_time=req.services.service_down_time)


def detail(req, one: compute_services.Located, zones: Zones) -> dict:
    row = one.row
    doc = {'id': row['uuid'] if req.mv >= (2, 53) else row['id'],
           'binary': row['binary'], 'host': row['host'],
           'zone': zones.of(row['binary'], row['host']),
           'status': 'disabled' if row['disabled'] else 'enabled',
           'state': 'up' if is_up(req, row) else 'down',
           'updated_at': iso(row['updated_at']), 'disabled_reason': row['disabled_reason']}
    if req.mv >= (2, 11):
        doc['forced_down'] = bool(row['forced_down'])
    return doc


def _unknown(req, found: compute_services.Found) -> list[dict]:
    """From 2.69, Nova's partial records for a cell that cannot be read: its mapped hosts'
    compute services, ``{"binary", "host", "status": "UNKNOWN"}``."""
    if req.mv < (2, 69) or not found.unread:
        return []
    engine = req.services.api_engine
    cell_of = cell_mappings.uuids_by_id(engine)
    return [{'binary': COMPUTE_BINARY, 'host': host, 'status': 'UNKNOWN'}
            for host, cell_id in host_mappings.list_all(engine)
            if cell_of.get(cell_id) in found.unread]


def list_services(req):
    """``{"services": [...]}``, filtered by ``?host=`` and ``?binary=`` when given."""
    req.authorize(rules.LIST)
    found = found_services(req)
    zones = zones_of(req, found)
    docs = [detail(req, one, zones) for one in found.services] + _unknown(req, found)
    host, binary = req.GET.get('host'), req.GET.get('binary')
    return json_response({'services': [doc for doc in docs
                                       if (not host or doc['host'] == host)
                                       and (not binary or doc['binary'] == binary)]})


def _by_host_binary(req, host: str, binary: str) -> compute_services.Located:
    if binary != COMPUTE_BINARY:
        raise errors.BadRequest(f'Updating a {binary} service is not supported. Only '
                                f'{COMPUTE_BINARY} services can be updated.')
    having = [one for one in found_services(req).services
              if one.row['host'] == host and one.row['binary'] == binary]
    if not having:
        raise errors.NotFound(f'Could not find binary {binary} on host {host}.')
    return having[0]


def _disable(req, one: compute_services.Located, *, disabled: bool, reason: str | None):
    changed = compute_services.set_disabled(
        req.services.api_engine, one, disabled=disabled, reason=reason,
        placement=req.services.placement)
    if changed.placement_error is not None:
        # As Nova: the service is changed; its providers' trait follows at the next change.
        LOG.warning('Service %s on %s %s, but Placement was not told: %s', one.row['binary'],
                    one.row['host'], 'disabled' if disabled else 'enabled',
                    changed.placement_error)
    return changed


def update_service(req):
    """``PUT /os-services/{action or uuid}``: what changed (below 2.53) or the service (2.53)."""
    body = req.json_body()
    ident = req.urlvars['service_id']
    if req.mv >= (2, 53):
        return _update_v253(req, ident, body)
    validate(schemas.UPDATE_V211 if req.mv >= (2, 11) else schemas.UPDATE_V21, body)
    req.authorize(rules.UPDATE)
    actions = ('enable', 'disable', 'disable-log-reason') + (
        ('force-down',) if req.mv >= (2, 11) else ())
    if ident not in actions:
        raise errors.NotFound('Unknown action')
    host, binary = body['host'], body['binary']
    if ident == 'force-down':
        if 'forced_down' not in body:
            raise errors.BadRequest('Missing forced_down field')
        forced = schemas.as_bool(body['forced_down'])
        compute_services.set_forced_down(req.services.api_engine,
                                         _by_host_binary(req, host, binary), forced_down=forced)
        return json_response({'service': {'host': host, 'binary': binary,
                                          'forced_down': forced}})
    reason = None
    if ident == 'disable-log-reason':
        reason = body.get('disabled_reason')
        if not reason:
            raise errors.BadRequest('Missing disabled reason field')
    disabled = ident != 'enable'
    _disable(req, _by_host_binary(req, host, binary), disabled=disabled, reason=reason)
    answer = {'host': host, 'binary': binary, 'status': 'disabled' if disabled else 'enabled'}
    if reason:
        answer['disabled_reason'] = reason
    return json_response({'service': answer})


def _by_uuid(req, ident: str) -> compute_services.Located:
    found = [one for one in found_services(req).services if one.row['uuid'] == ident]
    if not found:
        raise errors.NotFound(f'Service {ident} could not be found.')
    return found[0]


def _update_v253(req, ident: str, body):
    if not is_uuid(ident):
        raise errors.BadRequest(f'Invalid uuid {ident}')
    validate(schemas.UPDATE_V253, body)
    req.authorize(rules.UPDATE)
    one = _by_uuid(req, ident)
    if one.row['binary'] != COMPUTE_BINARY:
        raise errors.BadRequest(f'Updating a {one.row["binary"]} service is not supported. '
                                f'Only {COMPUTE_BINARY} services can be updated.')
    if body.get('status') == 'enabled' and body.get('disabled_reason'):
        raise errors.BadRequest("Specifying 'disabled_reason' with status 'enabled' is "
                                "invalid.")
    if 'status' not in body and 'forced_down' not in body:
        raise errors.BadRequest("No updates were requested. Fields 'status' or "
                                "'forced_down' should be specified.")
    if 'status' in body:
        disabled = body['status'] == 'disabled'
        one = _disable(req, one, disabled=disabled,
                       reason=body.get('disabled_reason') if disabled else None).service
    if 'forced_down' in body:
        one = compute_services.set_forced_down(
            req.services.api_engine, one,
            forced_down=schemas.as_bool(body['forced_down'])).service
    zones = zones_of(req, compute_services.Found([one], {}))
    return json_response({'service': detail(req, one, zones)})


def delete_service(req):
    """``DELETE /os-services/{id}``: 204; a compute service still hosting servers is 409."""
    ident = req.urlvars['service_id']
    if req.mv >= (2, 53):
        if not is_uuid(ident):
            raise errors.BadRequest(f'Invalid uuid {ident}')
    elif not ident.isdigit():
        raise errors.BadRequest('Invalid input received: id must be an integer')
    req.authorize(rules.DELETE)
    services = req.services
    found = found_services(req).services
    if req.mv >= (2, 53):
        having = [one for one in found if one.row['uuid'] == ident]
    else:
        having = [one for one in found if one.row['id'] == int(ident)]
    if not having:
        raise errors.NotFound(f'Service {ident} not found.')
    if len(having) > 1:
        raise errors.BadRequest(f'Service id {ident} refers to multiple services.')
    try:
        compute_services.delete(services.api_engine, having[0], placement=services.placement)
    except compute_services.ServiceInUse as exc:
        raise errors.Conflict(str(exc)) from None
    return empty_response(204)
