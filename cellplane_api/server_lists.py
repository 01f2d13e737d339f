"""``GET /servers`` and ``/servers/detail``'s query, as Nova answers it: who is listed, filtered, sorted and paged.

A caller lists its own project's servers; with ``all_tenants`` (its rule
allowing) an admin lists every project's, or ``project_id``'s. Filters any
caller may use: ``name`` (a regular expression), ``status`` (several
allowed; an unknown one matches nothing below 2.38 and is a 400 from it;
DELETED for admins), ``image``, ``flavor``, ``ip``/``ip6`` (cellplane's
servers have no addresses: nothing matches), ``reservation_id`` (none
has one), ``changes-since`` and from 2.66 ``changes-before`` (deleted
servers listed too), from 2.26 ``tags``/``tags-any`` (no server has tags:
nothing matches) and ``not-tags``/``not-tags-any`` (everything matches).
Admins (``allow_all_filters``) also filter by ``host``, ``node``,
``user_id``, ``availability_zone`` and ``uuid``; other parameters are
ignored, as Nova ignores them below 2.75.

Sorted by ``sort_key``/``sort_dir`` (several allowed), then ``created_at``
and id, all descending unless a direction is given, as Nova's
``get_sort_params`` and ``process_sort_params``; ``host`` and ``node`` sort
only for admins. Paged with ``limit`` (at most 1000) and ``marker``. From
2.69, with nothing asked but ``all_tenants``, the servers of a cell that
cannot be read are listed first as partial UNKNOWN records.
"""
from __future__ import annotations

import datetime
import re

from oslo_utils import strutils, timeutils

from cellplane_api import errors, servers
from cellplane_api.policies import servers as rules
from cellplane_api.views import servers as views

_EPOCH = datetime.datetime(1970, 1, 1)
MAX_LIMIT = 1000
# Nova's statuses a list may be filtered by (cellplane's servers are in few).
_KNOWN_STATUSES = frozenset((
    'ACTIVE', 'BUILD', 'DELETED', 'ERROR', 'HARD_REBOOT', 'MIGRATING', 'PASSWORD', 'PAUSED',
    'REBOOT', 'REBUILD', 'RESCUE', 'RESIZE', 'REVERT_RESIZE', 'SHELVED',
    'SHELVED_OFFLOADED', 'SHUTOFF', 'SOFT_DELETED', 'SUSPENDED', 'UNKNOWN',
    'VERIFY_RESIZE'))
# Nova's sort keys and what each sorts cellplane's servers by (None: a
# column cellplane's servers all hold the same value in).
_SORT_KEYS = {
    'access_ip_v4': None, 'access_ip_v6': None, 'auto_disk_config': None,
    'availability_zone': lambda s: s.availability_zone, 'config_drive': None,
    'created_at': lambda s: s.created_at,
    'display_description': lambda s: s.description, 'display_name': lambda s: s.name,
    'host': lambda s: s.host, 'hostname': lambda s: views.hostname(s.name, s.uuid),
    'image_ref': lambda s: s.image_ref, 'instance_type_id': lambda s: s.flavor_id,
    'kernel_id': None, 'key_name': None, 'launch_index': lambda s: s.launch_index,
    'launched_at': lambda s: s.launched_at, 'locked_by': None,
    'node': lambda s: s.node, 'power_state': lambda s: 1 if s.status == servers.ACTIVE else 0,
    'progress': None, 'project_id': lambda s: s.project_id, 'ramdisk_id': None,
    'root_device_name': None, 'task_state': lambda s: s.task_state, 'terminated_at': None,
    'updated_at': lambda s: s.updated_at or s.created_at, 'user_id': lambda s: s.user_id,
    'uuid': lambda s: s.uuid, 'vm_state': lambda s: s.status,
}
# Keys Nova accepts and ignores (SERVER_LIST_IGNORE_SORT_KEY).
_IGNORED_SORT_KEYS = frozenset((
    'architecture', 'cell_name', 'cleaned', 'default_ephemeral_device', 'default_swap_device',
    'deleted', 'deleted_at', 'disable_terminate', 'ephemeral_gb', 'ephemeral_key_uuid', 'id',
    'key_data', 'launched_on', 'locked', 'memory_mb', 'os_type', 'reservation_id', 'root_gb',
    'shutdown_terminate', 'user_data', 'vcpus', 'vm_mode'))
_ADMIN_SORT_KEYS = frozenset(('host', 'node'))
_ADMIN_FILTERS = {'host': lambda s: s.host, 'node': lambda s: s.node,
                  'user_id': lambda s: s.user_id,
                  'availability_zone': lambda s: s.availability_zone,
                  'uuid': lambda s: s.uuid}


def _parse_time(name: str, value: str) -> datetime.datetime:
    try:
        return timeutils.normalize_time(timeutils.parse_isotime(value))
    except ValueError:
        raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: {value}. '
                                f'It is not an ISO 8601 time.') from None


def _all_tenants(params) -> bool:
    """Nova's ``is_all_tenants``: present and not false (an empty value is true)."""
    if 'all_tenants' not in params:
        return False
    value = params['all_tenants']
    try:
        return value == '' or strutils.bool_from_string(value, strict=True)
    except ValueError:
        raise errors.BadRequest(f'Invalid input for query parameters all_tenants. Value: '
                                f'{value}. It is not a boolean.') from None


def _with_statuses(req, found: list[servers.Server], wanted: set[str]) -> list[servers.Server]:
    if not wanted & _KNOWN_STATUSES:
        if views.at_least(req, 38):
            raise errors.BadRequest('Invalid status value')
        return []
    return [s for s in found if s.status in wanted]


def _cell_down_records_wanted(req) -> bool:
    """Nova lists a down cell's servers (2.69) only when nothing but ``all_tenants`` is asked.

    ``deleted`` false is no filter: it is Nova's own default (its search
    options always hold it), and python-openstackclient sends it.
    """
    return views.at_least(req, 69) and all(
        k == 'all_tenants' or (k == 'deleted' and not strutils.bool_from_string(v))
        for k, v in req.GET.items())


def _filtered(req, found: list[servers.Server], statuses: set[str]) -> list[servers.Server]:
    params = req.GET
    if params.get('name'):
        try:
            pattern = re.compile(params['name'])
        except re.error:
            raise errors.BadRequest(f'Invalid input for query parameters name. Value: '
                                    f'{params["name"]}. It is not a regular expression.') from None
        found = [s for s in found if pattern.search(s.name or '')]
    if statuses:
        found = _with_statuses(req, found, statuses)
    if params.get('image'):
        image = params['image'].rstrip('/').rsplit('/', 1)[-1]
        found = [s for s in found if s.image_ref == image]
    if params.get('flavor'):
        flavor = params['flavor'].rstrip('/').rsplit('/', 1)[-1]
        found = [s for s in found if s.flavor_id == flavor]
    if (params.get('ip') or (views.at_least(req, 5) and params.get('ip6'))
            or params.get('reservation_id')):
        # No cellplane server has an address or a reservation id.
        found = []
    if views.at_least(req, 26) and (params.get('tags') or params.get('tags-any')):
        # cellplane's servers have no tags: none has the ones asked for.
        found = []
    if req.allowed(rules.ALLOW_ALL_FILTERS):
        for name, value_of in _ADMIN_FILTERS.items():
            if params.get(name):
                found = [s for s in found if value_of(s) == params[name]]
    return found


def _sort_params(req) -> list[tuple[str, bool]]:
    """(key, descending) pairs: those asked, then ``created_at`` and id, as Nova's."""
    keys = [k.strip() for k in req.GET.getall('sort_key')] or ['created_at']
    dirs = [d.strip() for d in req.GET.getall('sort_dir')] or ['desc']
    for key in keys:
        if key not in _SORT_KEYS and key not in _IGNORED_SORT_KEYS:
            raise errors.BadRequest(f'Invalid input for query parameters sort_key. Value: '
                                    f'{key}.')
    for direction in dirs:
        if direction not in ('asc', 'desc'):
            raise errors.BadRequest(f'Invalid input for query parameters sort_dir. Value: '
                                    f'{direction}. It must be asc or desc.')
    if len(dirs) > len(keys):
        raise errors.BadRequest('Sort direction size exceeds sort key size')
    dirs += [dirs[0]] * (len(keys) - len(dirs))
    admin = req.allowed(rules.ALLOW_ALL_FILTERS)
    pairs = [(k, d == 'desc') for k, d in zip(keys, dirs, strict=True)
             if k not in _IGNORED_SORT_KEYS and (admin or k not in _ADMIN_SORT_KEYS)]
    for default in ('created_at', 'id'):
        if default not in keys:
            pairs.append((default, dirs[0] == 'desc'))
    return pairs


def _sorted(req, found: list[servers.Server]) -> list[servers.Server]:
    """``found`` (in creation order: Nova's id order) sorted as asked, by stable sorts."""
    ordered = list(found)
    for key, descending in reversed(_sort_params(req)):
        if key == 'id':
            if descending:
                ordered.reverse()
            continue
        value_of = _SORT_KEYS.get(key)
        if value_of is None:
            continue
        values = [value_of(s) for s in ordered]
        if any(value is None for value in values):
            # NULL sorts before any value, as MySQL sorts it.
            values = [_sort_value(value) for value in values]
        # Sorted by the values alone (no key call per comparison), stable as list.sort.
        at = sorted(range(len(ordered)), key=values.__getitem__, reverse=descending)
        ordered = [ordered[i] for i in at]
    return ordered


def _sort_value(value) -> tuple:
    """The sort key of a value: None before any other; a string as itself."""
    if isinstance(value, str):
        return (True, value)
    return (value is not None, value or 0)


def _limit(req) -> int:
    if req.GET.get('limit') is None:
        return MAX_LIMIT
    value = req.GET['limit']
    try:
        limit = int(value)
    except ValueError:
        limit = -1
    if limit < 0:
        raise errors.BadRequest(f'Invalid input for query parameters limit. Value: {value}. '
                                f'It is not a whole number >= 0.')
    return min(limit, MAX_LIMIT)


def listed(req, rule_all: str) -> tuple[list[servers.Server], bool]:
    """The page of servers the request asks for, and whether more follow."""
    params = req.GET
    admin_all = _all_tenants(params)
    if admin_all:
        req.authorize(rule_all)
    statuses = {value.upper() for value in params.getall('status')}
    if servers.DELETED in statuses and not req.is_admin():
        raise errors.Forbidden('Only administrators may list deleted instances')
    changes_since = params.get('changes-since')
    changes_before = params.get('changes-before') if views.at_least(req, 66) else None
    since = _parse_time('changes-since', changes_since) if changes_since else None
    before = _parse_time('changes-before', changes_before) if changes_before else None
    if since and before and before < since:
        raise errors.BadRequest('The value of changes-since must be less than or equal to '
                                'changes-before.')
    project = params.get('project_id') or params.get('tenant_id') if admin_all else None
    if not admin_all:
        project = req.credentials.project_id
    services = req.services
    # Only the project's servers are read (its mappings, then their cells), and
    # of the cells only the rows the status and changes-since filters may keep.
    narrowed = None
    if since or statuses:
        narrowed = servers.CellFilter(
            changed_since=since, vm_states=servers.vm_states_of(statuses) if statuses else None)
    found = servers.list_servers(
        services.api_engine, services.cells,
        include_deleted=bool(since or before or servers.DELETED in statuses),
        project_id=project or None, narrowed=narrowed, cell_timeout=services.cell_timeout)
    # A server of a cell that cannot be read is left out unless its partial
    # record is wanted, as Nova does ([api] list_records_by_skipping_down_cells).
    down_wanted = _cell_down_records_wanted(req)
    unknown = servers.UNKNOWN
    down, readable = [], []
    for server in found:
        if project and server.project_id != project:
            continue
        if server.status != unknown:
            readable.append(server)
        elif down_wanted:
            down.append(server)
    found = readable
    found = _filtered(req, found, statuses)
    if since:
        found = [s for s in found if (s.updated_at or s.created_at or _EPOCH) >= since]
    if before:
        found = [s for s in found if (s.updated_at or s.created_at or _EPOCH) <= before]
    # Nova puts the partial records of cells that cannot be read first.
    found = down + _sorted(req, found)
    marker = params.get('marker')
    if marker:
        at = next((i for i, s in enumerate(found) if s.uuid == marker), None)
        if at is None:
            raise errors.BadRequest(f'marker [{marker}] not found')
        found = found[at + 1:]
    limit = _limit(req)
    return found[:limit], len(found) > limit
