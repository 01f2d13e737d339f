"""``/os-hypervisors``: list, detail, show, statistics, uptime (Nova's 501), and (below 2.53)
search and servers.

A hypervisor in detail (2.53: uuids; 2.28: ``cpu_info`` an object, a
JSON string before; 2.33: ``limit``/``marker`` paging with
``hypervisors_links``; 2.53: ``with_servers`` and
``hypervisor_hostname_pattern``)::

    {"id": "1b6c...", "hypervisor_hostname": "cell1-host1", "state": "up",
     "status": "enabled", "vcpus": 8, "vcpus_used": 2, "memory_mb": 16384,
     "memory_mb_used": 1024, "local_gb": 100, "local_gb_used": 2,
     "free_ram_mb": 15360, "free_disk_gb": 98, "disk_available_least": 98,
     "current_workload": 0, "running_vms": 2, "hypervisor_type": "fake",
     "hypervisor_version": 1000, "host_ip": null, "cpu_info": {},
     "service": {"host": "cell1-host1", "id": "5e7c...", "disabled_reason": null}}

Usage is read from Placement (``cellplane_api/hypervisors.py``). Nodes
are listed cell by cell (by name), then by id; ids below 2.53 are the
node's row id in its cell, as Nova's were: the same id can be in two cells,
and a marker or a show by id takes the first cell that has it, as Nova
does (its reason for 2.53's uuids).
"""
from __future__ import annotations

import urllib.parse

from cellplane_api import errors
from cellplane_api import hypervisors as nodes
from cellplane_api.handlers.services import is_up, is_uuid
from cellplane_api.policies import hypervisors as rules
from cellplane_api.request import json_response
from cellplane_api.schemas import services as service_schemas
from placement.client import PlacementUnreachable

# cellplane's only virt driver (compute_agent/virt/fake.py), reported as Nova's fake driver is.
HYPERVISOR_TYPE = 'fake'
HYPERVISOR_VERSION = 1000


def _id(req, hypervisor: nodes.Hypervisor):
    return hypervisor.node['uuid'] if req.mv >= (2, 53) else hypervisor.node['id']


def _brief(req, hypervisor: nodes.Hypervisor) -> dict:
    service = hypervisor.service
    return {'id': _id(req, hypervisor),
            'hypervisor_hostname': hypervisor.node['nodename'],
            'state': 'up' if service is not None and is_up(req, service) else 'down',
            'status': 'disabled' if service is not None and service['disabled'] else 'enabled'}


def _servers(hypervisor: nodes.Hypervisor) -> list[dict]:
    return [{'uuid': s['uuid'], 'name': s['display_name'] or ''} for s in hypervisor.servers]


def _usage(req, hypervisor: nodes.Hypervisor) -> nodes.Usage:
    try:
        return nodes.usage_of(req.services.placement, hypervisor)
    except PlacementUnreachable as exc:
        raise errors.ComputeError(f'Placement cannot be reached to read the usage of '
                                  f'hypervisor {hypervisor.node["nodename"]}: {exc}') from None


def _detail(req, hypervisor: nodes.Hypervisor) -> dict:
    usage = _usage(req, hypervisor)
    service = hypervisor.service or {}
    free_disk = usage.local_gb - usage.local_gb_used
    return {**_brief(req, hypervisor),
            'vcpus': usage.vcpus, 'vcpus_used': usage.vcpus_used,
            'memory_mb': usage.memory_mb, 'memory_mb_used': usage.memory_mb_used,
            'local_gb': usage.local_gb, 'local_gb_used': usage.local_gb_used,
            'free_ram_mb': usage.memory_mb - usage.memory_mb_used,
            'free_disk_gb': free_disk, 'disk_available_least': free_disk,
            'current_workload': 0, 'running_vms': len(hypervisor.servers),
            'hypervisor_type': HYPERVISOR_TYPE, 'hypervisor_version': HYPERVISOR_VERSION,
            'host_ip': None, 'cpu_info': {} if req.mv >= (2, 28) else '{}',
            'service': {'host': hypervisor.node['host'],
                        'id': service.get('uuid' if req.mv >= (2, 53) else 'id'),
                        'disabled_reason': service.get('disabled_reason')}}


def _with_servers(req) -> bool:
    if req.mv < (2, 53) or 'with_servers' not in req.GET:
        return False
    value = req.GET['with_servers']
    if value not in service_schemas.TRUE + service_schemas.FALSE:
        raise errors.BadRequest(f"Invalid input for query parameters with_servers. Value: "
                                f"{value}. '{value}' is not one of the accepted values.")
    return service_schemas.as_bool(value)


def _paging(req) -> tuple[int | None, str | None]:
    if req.mv < (2, 33):
        return None, None
    limit, marker = req.GET.get('limit'), req.GET.get('marker')
    if limit is not None:
        if not limit.isdigit():
            raise errors.BadRequest(f'Invalid input for query parameters limit. Value: '
                                    f'{limit}. limit must be a non-negative integer.')
        limit = int(limit)
    return limit, marker


def _page(req, found: list[nodes.Hypervisor], limit, marker) -> list[nodes.Hypervisor]:
    if marker is not None:
        ids = [str(_id(req, h)) for h in found]
        if marker not in ids:
            raise errors.BadRequest(f'marker [{marker}] not found')
        found = found[ids.index(marker) + 1:]
    return found if limit is None else found[:limit]


def _links(req, collection: str, page: list[nodes.Hypervisor], limit) -> list[dict]:
    if limit is None or not page or len(page) < limit:
        return []
    query = {k: v for k, v in req.GET.items() if k != 'marker'}
    query['marker'] = str(_id(req, page[-1]))
    return [{'rel': 'next', 'href': f'{req.link_base()}/{collection}?'
                                    f'{urllib.parse.urlencode(query)}'}]


def _listed(req, *, detail: bool):
    req.authorize(rules.LIST_DETAIL if detail else rules.LIST)
    limit, marker = _paging(req)
    with_servers = _with_servers(req)
    pattern = req.GET.get('hypervisor_hostname_pattern') if req.mv >= (2, 53) else None
    if pattern is not None and (limit is not None or marker is not None):
        raise errors.BadRequest('Paging over hypervisors with the hypervisor_hostname_pattern '
                                'query parameter is not supported.')
    found = nodes.read(req.services.cells, req.services.cell_timeout)
    if pattern is not None:
        found = [h for h in found if pattern in h.node['nodename']]
        if not found:
            raise errors.NotFound(f"No hypervisor matching '{pattern}' could be found.")
    page = _page(req, found, limit, marker)
    docs = []
    for hypervisor in page:
        doc = _detail(req, hypervisor) if detail else _brief(req, hypervisor)
        if with_servers and hypervisor.servers:
            doc['servers'] = _servers(hypervisor)
        docs.append(doc)
    body = {'hypervisors': docs}
    links = _links(req, 'os-hypervisors/detail' if detail else 'os-hypervisors', page, limit)
    if links:
        body['hypervisors_links'] = links
    return json_response(body)


def list_hypervisors(req):
    """``{"hypervisors": [{"id", "hypervisor_hostname", "state", "status"}, ...]}``"""
    return _listed(req, detail=False)


def list_hypervisors_detail(req):
    """``{"hypervisors": [<detail>, ...]}``"""
    return _listed(req, detail=True)


def show_hypervisor(req):
    """``{"hypervisor": <detail>}``; ``with_servers`` (2.53) adds its servers."""
    with_servers = _with_servers(req)
    found = _one(req, rules.SHOW)
    doc = _detail(req, found)
    if with_servers and found.servers:
        doc['servers'] = _servers(found)
    return json_response({'hypervisor': doc})


def _one(req, rule: str) -> nodes.Hypervisor:
    ident = req.urlvars['hypervisor_id']
    if req.mv >= (2, 53):
        if not is_uuid(ident):
            raise errors.BadRequest(f'Invalid uuid {ident}')
    elif not ident.isdigit():
        raise errors.NotFound(f"Hypervisor with ID '{ident}' could not be found.")
    req.authorize(rule)
    found = [h for h in nodes.read(req.services.cells, req.services.cell_timeout)
             if str(_id(req, h)) == ident]
    if not found:
        raise errors.NotFound(f"Hypervisor with ID '{ident}' could not be found.")
    return found[0]


def uptime(req):
    """Nova's 501: cellplane's virt driver does not report its host's uptime (as Nova answers for
    a driver without it; ``openstack hypervisor show`` expects exactly that)."""
    _one(req, rules.UPTIME)
    raise errors.Unimplemented('Virt driver does not implement uptime function.')


def statistics(req):
    """``{"hypervisor_statistics": {"count", "vcpus", "vcpus_used", ...}}`` over the nodes whose
    compute service is enabled, as Nova sums them."""
    req.authorize(rules.STATISTICS)
    keys = ('vcpus', 'vcpus_used', 'memory_mb', 'memory_mb_used', 'local_gb', 'local_gb_used',
            'free_ram_mb', 'free_disk_gb', 'disk_available_least', 'current_workload',
            'running_vms')
    sums = dict.fromkeys(keys, 0)
    count = 0
    for hypervisor in nodes.read(req.services.cells, req.services.cell_timeout):
        if hypervisor.service is None or hypervisor.service['disabled']:
            continue
        count += 1
        doc = _detail(req, hypervisor)
        for key in keys:
            sums[key] += doc[key]
    return json_response({'hypervisor_statistics': {'count': count, **sums}})


def _matching(req, rule: str) -> list[nodes.Hypervisor]:
    if req.mv >= (2, 53):
        raise errors.NotFound('The resource could not be found.')
    req.authorize(rule)
    pattern = req.urlvars['hypervisor_id']
    found = [h for h in nodes.read(req.services.cells, req.services.cell_timeout)
             if pattern in h.node['nodename']]
    if not found:
        raise errors.NotFound(f"No hypervisor matching '{pattern}' could be found.")
    return found


def search(req):
    """Below 2.53: ``{"hypervisors": [<brief>, ...]}`` whose hostname contains the pattern."""
    return json_response({'hypervisors': [_brief(req, h)
                                          for h in _matching(req, rules.SEARCH)]})


def servers(req):
    """Below 2.53: the matching hypervisors with their ``servers`` (when they have any)."""
    docs = []
    for hypervisor in _matching(req, rules.SERVERS):
        doc = _brief(req, hypervisor)
        if hypervisor.servers:
            doc['servers'] = _servers(hypervisor)
        docs.append(doc)
    return json_response({'hypervisors': docs})
