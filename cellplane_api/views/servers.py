"""Nova's server documents at each microversion from 2.1 to 2.69, from the API role's ``Server``.

A detailed server at 2.1 (``fault`` only for ERROR and DELETED servers with
one, ``progress`` only while BUILD or ACTIVE, ``OS-EXT-SRV-ATTR:*`` only for
callers the ``os-extended-server-attributes`` rule lets see them)::

    {"id": "...", "name": "web", "status": "ACTIVE", "tenant_id": "p", "user_id": "u",
     "metadata": {}, "hostId": "<sha224>", "image": {"id": "cirros", "links": [...]},
     "flavor": {"id": "small", "links": [{"rel": "bookmark", ...}]},
     "created": "2026-11-26T10:00:00Z", "updated": "...", "addresses": {},
     "accessIPv4": "", "accessIPv6": "", "links": [...], "OS-DCF:diskConfig": "MANUAL",
     "progress": 0, "OS-EXT-AZ:availability_zone": "", "config_drive": "",
     "key_name": null, "OS-SRV-USG:launched_at": "...", "OS-SRV-USG:terminated_at": null,
     "OS-EXT-STS:task_state": null, "OS-EXT-STS:vm_state": "active",
     "OS-EXT-STS:power_state": 1, "os-extended-volumes:volumes_attached": []}

and, as Nova adds them: 2.3 more ``OS-EXT-SRV-ATTR:*`` (reservation id,
launch index, hostname, kernel, ramdisk, root device, user data) and
``delete_on_termination`` in attached volumes; 2.9 ``locked``; 2.16
``host_status`` (its own rules); 2.19 ``description``; 2.26 ``tags``; 2.47
the flavor as a dict (``original_name``, sizes, ``extra_specs`` for callers
the extra-specs index rule allows); 2.63 ``trusted_image_certificates``.
From 2.69 a server whose cell cannot be read is a partial record (``status``
UNKNOWN, what the API database knows), as Nova's ``_show_from_down_cell``.

What cellplane does not have is answered as Nova answers a server without
it: no addresses, metadata, key pair, volumes, tags, lock, trusted
certificates, reservation id, kernel, ramdisk, user data or root device.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import hashlib
import re

from cellplane_api import servers
from cellplane_api.views.links import links
from rpc_schemas.flavor import Flavor

_VM_STATE = {servers.BUILD: 'building', servers.ACTIVE: 'active', servers.ERROR: 'error',
             servers.DELETED: 'deleted', servers.UNKNOWN: 'unknown'}
# Nova's power states: 0 NOSTATE, 1 RUNNING.
_POWER_STATE = {servers.ACTIVE: 1}
_PROGRESS_STATUSES = (servers.BUILD, servers.ACTIVE)
_FAULT_STATUSES = (servers.ERROR, servers.DELETED)
_EPOCH = datetime.datetime(1970, 1, 1)
# Nova's fault code for a failure of its own (details are for admins only).
_INTERNAL = 500


def at_least(req, minor: int) -> bool:
    return req.mv is not None and (req.mv.major, req.mv.minor) >= (2, minor)


def _minor(req) -> int:
    """The request's 2.x minor version (0 without one): compared once per field, not parsed."""
    return req.mv.minor if req.mv is not None and req.mv.major == 2 else 0


def isotime(value: datetime.datetime | None) -> str:
    """``2026-11-26T10:00:00Z``; the wall time as stored (naive UTC) whatever its tzinfo."""
    # isoformat is several times faster than strftime, and twice as fast without its
    # timespec keyword (the seconds are cut at 19 characters): a list writes three per server.
    return (value or _EPOCH).isoformat()[:19] + 'Z'


@dataclasses.dataclass(frozen=True)
class Viewer:
    """What the caller may be shown, asked of the policy once per request."""

    extended_attributes: bool = False   # os_compute_api:os-extended-server-attributes
    is_admin: bool = False              # context_is_admin: a fault's details
    extra_specs: bool = False           # the flavor's extra specs, from 2.47
    # Server uuid -> host status, from 2.16; None: not shown at all. With
    # ``unknown_only`` only an UNKNOWN status is shown.
    host_status: dict[str, str] | None = None
    host_status_unknown_only: bool = False


_SEPARATORS = re.compile(r'[ _.]')
_NOT_HOSTNAME = re.compile(r'[^\w.-]+')


def hostname(display_name: str | None, uuid: str) -> str:
    """The hostname Nova derives from a display name (``sanitize_hostname``)."""
    name = (display_name or '').encode('latin-1', 'ignore').decode('latin-1')[:63]
    name = _SEPARATORS.sub('-', name)
    name = _NOT_HOSTNAME.sub('', name).lower().strip('.-')
    return name or f'Server-{uuid}'


def _host_id(server: servers.Server) -> str:
    if not server.host:
        return ''
    return _project_host_id(server.project_id, server.host)


@functools.lru_cache(maxsize=4096)
def _project_host_id(project_id: str | None, host: str) -> str:
    """Nova's hostId: one per project and host, so a list of many servers on few hosts
    hashes each pair once."""
    return hashlib.sha224(f'{project_id}{host}'.encode()).hexdigest()


def _bookmark(req, kind: str, ident: str) -> list[dict]:
    return [{'rel': 'bookmark', 'href': f'{req.link_bases()[1]}/{kind}/{ident}'}]


def _cached(req) -> dict:
    """This request's documents shared by its servers (an image's, a flavor's): a list of
    a thousand servers has few of each. Never changed once made."""
    cache = req.environ.get('cellplane.view_cache')
    if cache is None:
        cache = req.environ['cellplane.view_cache'] = {}
    return cache


def _image(req, image_ref: str | None):
    if not image_ref:
        return ''
    cache = _cached(req)
    doc = cache.get(('image', image_ref))
    if doc is None:
        doc = cache[('image', image_ref)] = {'id': image_ref,
                                             'links': _bookmark(req, 'images', image_ref)}
    return doc


def _flavor(req, server: servers.Server, flavor: Flavor | None, viewer: Viewer) -> dict:
    if flavor is None:
        # Nova answers {} for an instance whose flavor cannot be read.
        return {}
    cache = _cached(req)
    # Flavors are frozen and shared by the servers built with them (servers._flavor_of_text).
    key = ('flavor', id(flavor), viewer.extra_specs)
    found = cache.get(key)
    if found is not None and found[0] is flavor:
        return found[1]
    if not at_least(req, 47):
        doc = {'id': flavor.flavorid, 'links': _bookmark(req, 'flavors', flavor.flavorid)}
    else:
        doc = {'vcpus': flavor.vcpus, 'ram': flavor.memory_mb, 'disk': flavor.root_gb,
               'ephemeral': 0, 'swap': 0, 'original_name': flavor.name}
        if viewer.extra_specs:
            doc['extra_specs'] = dict(flavor.extra_specs)
    cache[key] = (flavor, doc)
    return doc


def _fault(server: servers.Server, viewer: Viewer) -> dict | None:
    if server.status not in _FAULT_STATUSES or not server.fault:
        return None
    message, _, details = server.fault.partition('\n')
    doc = {'code': _INTERNAL, 'created': isotime(server.updated_at or server.created_at),
           'message': message}
    if details and viewer.is_admin:
        doc['details'] = details
    return doc


def brief(req, server: servers.Server) -> dict:
    """A server as ``GET /servers`` lists it."""
    if server.status == servers.UNKNOWN:
        return {'id': server.uuid, 'status': servers.UNKNOWN,
                'links': links(req, 'servers', server.uuid)}
    return {'id': server.uuid, 'name': server.name or '',
            'links': links(req, 'servers', server.uuid)}


def partial(req, server: servers.Server, *, spec=None, viewer: Viewer = Viewer()) -> dict:
    """A server of a cell that cannot be read, from 2.69: what the API database knows.

    ``spec`` (its ``RequestSpec``, for ``GET /servers/{id}`` only) adds the
    image, flavor, zone, user and power state, as Nova does from its request
    spec.
    """
    doc = {'id': server.uuid, 'status': servers.UNKNOWN, 'tenant_id': server.project_id or '',
           'created': isotime(server.created_at), 'links': links(req, 'servers', server.uuid)}
    if spec is not None:
        doc['image'] = _image(req, spec.image_ref)
        doc['flavor'] = _flavor(req, server, spec.flavor, viewer)
        doc['OS-EXT-AZ:availability_zone'] = spec.availability_zone or 'UNKNOWN'
        doc['OS-EXT-STS:power_state'] = 0
        doc['user_id'] = server.user_id or spec.user_id or 'UNKNOWN'
    return doc


def detail(req, server: servers.Server, viewer: Viewer) -> dict:
    """A server as ``GET /servers/{id}`` shows it at ``req.mv``."""
    return details(req, [server], viewer)[0]


def details(req, found, viewer: Viewer) -> list[dict]:
    """Servers as ``GET /servers/detail`` lists them (and ``detail`` shows one) at ``req.mv``.

    What every document of the request shares (the version's fields, the
    caller's rights, the link bases, the image and flavor documents) is
    decided once, and each document written in one pass: a list writes a
    thousand.
    """
    minor = _minor(req)
    versioned, bookmark = req.link_bases()
    versioned, bookmark = f'{versioned}/servers/', f'{bookmark}/servers/'
    default_zone = req.services.default_zone
    extended, extended_3 = viewer.extended_attributes, viewer.extended_attributes and minor >= 3
    host_statuses = viewer.host_status if minor >= 16 else None
    unknown_only = viewer.host_status_unknown_only
    is_admin = viewer.is_admin
    locked, described, tagged, certified = minor >= 9, minor >= 19, minor >= 26, minor >= 63
    vm_states, power_states = _VM_STATE, _POWER_STATE
    progress_statuses, fault_statuses = _PROGRESS_STATUSES, _FAULT_STATUSES
    unknown, epoch, host_id = servers.UNKNOWN, _EPOCH, _project_host_id
    images: dict[str, dict] = {}
    flavors: dict[int, tuple[Flavor, dict]] = {}
    docs = []
    for server in found:
        status = server.status
        if status == unknown:
            docs.append(partial(req, server, viewer=viewer))
            continue
        uuid, host, created_at = server.uuid, server.host, server.created_at
        image_ref, flavor = server.image_ref, server.flavor_spec
        if not image_ref:
            image = ''
        else:
            image = images.get(image_ref)
            if image is None:
                image = images[image_ref] = _image(req, image_ref)
        if flavor is not None:
            # Flavors are frozen and shared by the servers built with them.
            known = flavors.get(id(flavor))
            if known is None or known[0] is not flavor:
                known = flavors[id(flavor)] = (flavor, _flavor(req, server, flavor, viewer))
            flavor_doc = known[1]
        doc = {
            'id': uuid, 'name': server.name or '', 'status': status,
            'tenant_id': server.project_id or '', 'user_id': server.user_id or '',
            'metadata': {}, 'hostId': host_id(server.project_id, host) if host else '',
            'image': image,
            'flavor': {} if flavor is None else flavor_doc,
            # As ``isotime`` writes them, inline.
            'created': (created_at or epoch).isoformat()[:19] + 'Z',
            'updated': (server.updated_at or created_at or epoch).isoformat()[:19] + 'Z',
            'addresses': {}, 'accessIPv4': '', 'accessIPv6': '',
            'links': [{'rel': 'self', 'href': versioned + uuid},
                      {'rel': 'bookmark', 'href': bookmark + uuid}],
            'OS-DCF:diskConfig': 'MANUAL',
        }
        if status in fault_statuses and server.fault:
            message, _, fault_details = server.fault.partition('\n')
            fault = doc['fault'] = {
                'code': _INTERNAL, 'created': isotime(server.updated_at or created_at),
                'message': message}
            if fault_details and is_admin:
                fault['details'] = fault_details
        if status in progress_statuses:
            # Nova's instances start at 0; only its migrations and snapshots move it.
            doc['progress'] = 0
        # Placed on a host in no zone: the default zone, as Nova records it at scheduling.
        doc['OS-EXT-AZ:availability_zone'] = server.availability_zone or (
            default_zone if host else '')
        doc['config_drive'] = ''
        doc['key_name'] = None
        launched_at = server.launched_at
        doc['OS-SRV-USG:launched_at'] = (
            None if launched_at is None
            # Microseconds always; isoformat writes them by itself unless they are 0.
            else launched_at.isoformat() if launched_at.microsecond and launched_at.tzinfo is None
            else launched_at.replace(tzinfo=None).isoformat(timespec='microseconds'))
        doc['OS-SRV-USG:terminated_at'] = None
        if extended:
            doc['OS-EXT-SRV-ATTR:host'] = host
            doc['OS-EXT-SRV-ATTR:instance_name'] = f'instance-{uuid}'
            doc['OS-EXT-SRV-ATTR:hypervisor_hostname'] = server.node
            if extended_3:
                doc.update({
                    'OS-EXT-SRV-ATTR:reservation_id': None,
                    'OS-EXT-SRV-ATTR:launch_index': server.launch_index,
                    'OS-EXT-SRV-ATTR:hostname': hostname(server.name, uuid),
                    'OS-EXT-SRV-ATTR:kernel_id': '', 'OS-EXT-SRV-ATTR:ramdisk_id': '',
                    'OS-EXT-SRV-ATTR:root_device_name': None,
                    'OS-EXT-SRV-ATTR:user_data': None,
                })
        doc['OS-EXT-STS:task_state'] = server.task_state
        doc['OS-EXT-STS:vm_state'] = vm_states.get(status) or status.lower()
        doc['OS-EXT-STS:power_state'] = power_states.get(status, 0)
        doc['os-extended-volumes:volumes_attached'] = []
        if host_statuses is not None:
            host_status = host_statuses.get(uuid, '')
            if not unknown_only or host_status == 'UNKNOWN':
                doc['host_status'] = host_status
        if locked:
            doc['locked'] = False
        if described:
            doc['description'] = server.description
        if tagged:
            doc['tags'] = []
        if certified:
            doc['trusted_image_certificates'] = None
        docs.append(doc)
    return docs
