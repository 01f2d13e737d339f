"""Servers (instances) as the API role sees them: create, list, show, delete.

``create`` is boot flow step 1: build requests, request spec and cell-less
instance mappings written in one transaction, then ``schedule_and_build_instances``
cast to the super conductor. Reads follow the instance mappings: an instance
in a cell is read from that cell's database (state, host, fault, action
events), one still without a cell from its build request (being scheduled,
or failed before reaching a cell, with the reason). ``delete`` casts
``terminate_instance`` to the instance's host over its cell's bus, or
discards the build request of an instance that never reached a cell.

Statuses shown: BUILD, ACTIVE, ERROR, DELETED (from the vm_state), and
UNKNOWN for the instances of a cell whose database cannot be read right now,
or does not answer within ``[cells] read_timeout`` (the fault says which
cell and why): one unreachable cell neither hides the servers of the others
nor holds the command longer than the timeout.
"""
from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import uuid as uuidlib
from typing import Callable, Iterable, Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from cellplane.cells.databases import CellDatabases
from cellplane.cells.scatter_gather import CellTimeout, gather
from cellplane.context import RequestContext
from cellplane.db import away, reads
from cellplane.objects import (
    aggregates,
    build_requests,
    compute_nodes,
    instance_actions,
    instance_mappings,
    instances,
    quota_locks,
    server_groups,
    services,
)
from cellplane.objects import flavors as api_flavors
from cellplane.objects.cell_mappings import CellMapping
from cellplane.objects.instance_actions import AttemptEvent
from cellplane_api.conf import DEFAULT_CELL_TIMEOUT
from cellplane_api.quotas import DatabaseQuotas
from compute_agent.rpcapi import ComputeAPI
from conductor.super.rpcapi import SuperConductorAPI
from rpc_schemas import instance as instance_states
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import AFFINITY, ANTI_AFFINITY, InstanceGroup, RequestSpec

BUILD = 'BUILD'
ACTIVE = 'ACTIVE'
ERROR = 'ERROR'
DELETED = 'DELETED'
UNKNOWN = 'UNKNOWN'
# Nova's default_availability_zone; cellplane-api and the CLI pass the configured one.
DEFAULT_ZONE = 'nova'
# A cold migration or resize (Nova's): moving, waiting for confirm or revert, reverting.
RESIZE = 'RESIZE'
VERIFY_RESIZE = 'VERIFY_RESIZE'
REVERT_RESIZE = 'REVERT_RESIZE'
MIGRATING = 'MIGRATING'
REBUILD = 'REBUILD'    # an evacuation (Nova's status of task_state rebuilding)
FINAL_STATUSES = (ACTIVE, ERROR, DELETED)
STATUSES = (BUILD, ACTIVE, ERROR, DELETED, UNKNOWN, RESIZE, VERIFY_RESIZE, REVERT_RESIZE,
            MIGRATING, REBUILD)
_STATUS_OF_VM_STATE = {
    instance_states.BUILDING: BUILD, instance_states.ACTIVE: ACTIVE,
    instance_states.ERROR: ERROR, instance_states.DELETED: DELETED,
    instances.RESIZED: VERIFY_RESIZE,
}


def _status(vm_state: str, task_state: str | None) -> str:
    """Nova's status of a vm_state and task_state."""
    if task_state == instances.RESIZE_REVERTING:
        return REVERT_RESIZE
    if task_state == instances.REBUILDING:
        return REBUILD
    if vm_state == instance_states.ACTIVE and task_state == instances.MIGRATING:
        return MIGRATING
    if vm_state == instance_states.ACTIVE and task_state in (instances.RESIZE_PREP,
                                                             instances.RESIZE_MIGRATING):
        return RESIZE
    return _STATUS_OF_VM_STATE.get(vm_state, vm_state.upper())
MAX_COUNT = 1000
# The display name travels in the Instance payload, at most 255 characters.
NAME_MAX = 255 - len(f'-{MAX_COUNT}')


class ServerError(Exception):
    """A server request the user must correct (bad count, unknown flavor...)."""


class ServerNotFound(ServerError):
    """No instance mapping has this UUID."""


class AmbiguousServerName(ServerError):
    """Several servers have the name given where one was meant."""


@dataclasses.dataclass(frozen=True)
class Server:
    uuid: str
    name: str | None
    status: str
    task_state: str | None
    flavor: str
    cell: str | None
    host: str | None
    node: str | None
    fault: str | None
    created_at: datetime.datetime | None
    events: tuple[AttemptEvent, ...] = ()
    # Who owns it and where it was asked to run (None while its cell cannot be read).
    project_id: str | None = None
    user_id: str | None = None
    availability_zone: str | None = None
    flavor_id: str | None = None
    updated_at: datetime.datetime | None = None
    launched_at: datetime.datetime | None = None
    image_ref: str | None = None
    # The flavor the instance was built with (None while its cell cannot be read).
    flavor_spec: Flavor | None = None
    cell_uuid: str | None = None
    description: str | None = None
    launch_index: int = 0


def flavor_payload(flavor: api_flavors.FlavorRecord) -> Flavor:
    """The flavor as the request spec carries it (and as its Placement resources are read)."""
    return Flavor(name=flavor.name, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
                  root_gb=flavor.root_gb, flavorid=flavor.flavorid,
                  extra_specs=dict(flavor.extra_specs))


def display_names(name: str, count: int) -> list[str]:
    """``name`` for one instance, ``name-1`` ... ``name-N`` for several."""
    return [name] if count == 1 else [f'{name}-{i}' for i in range(1, count + 1)]


def check_zone(api_engine: Engine, cells: CellDatabases, zone: str, *,
               default_zone: str = DEFAULT_ZONE,
               cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> None:
    """Refuse (``ServerError``) an availability zone no host is in.

    A host is in a zone through an aggregate's ``availability_zone``
    metadata, else its compute node's ``[compute] availability_zone``, else
    it is in ``default_zone`` (``[DEFAULT] default_availability_zone``, Nova's
    ``nova``). While a cell cannot be read the zone cannot be refused: the
    scheduler decides.
    """
    if not zone.strip():
        raise ServerError('an availability zone must not be empty or blank')
    by_aggregate = {m.host: m.metadata[aggregates.AVAILABILITY_ZONE_KEY]
                    for m in aggregates.memberships(api_engine)
                    if m.metadata.get(aggregates.AVAILABILITY_ZONE_KEY)}
    known = {a.availability_zone for a in aggregates.list_all(api_engine)
             if a.availability_zone}
    if zone in known:
        return
    answers = gather({cell.uuid: (lambda uuid=cell.uuid: compute_nodes.list_with_service(
        cells.engine(uuid))) for cell in cells.enabled()}, cell_timeout)
    for answer in answers.values():
        if isinstance(answer, BaseException):
            return
        known |= {by_aggregate.get(node.host) or node.availability_zone or default_zone
                  for node in answer}
    if zone not in known:
        raise ServerError(f'availability zone {zone!r} does not exist: no host of any '
                          f'cell is in it (zones: {", ".join(sorted(known)) or "none"})')


def create(api_engine: Engine, conductor: SuperConductorAPI, ctxt: RequestContext, *,
           name: str, flavor: str | api_flavors.FlavorRecord, count: int = 1,
           project_id: str, user_id: str,
           image_properties: Mapping[str, str] | None = None,
           availability_zone: str | None = None, cells: CellDatabases | None = None,
           group: str | None = None, hints: Mapping[str, Sequence[str]] | None = None,
           image_ref: str | None = None, description: str | None = None,
           requested_networks: str | None = None, quotas: DatabaseQuotas | None = None,
           min_count: int | None = None, default_zone: str = DEFAULT_ZONE,
           cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> list[str]:
    """Record ``count`` instances and cast their scheduling; their UUIDs.

    With ``quotas`` (the CLI and the compute API pass their driver) the
    project's quota is checked in the transaction that writes them, under
    the project's quota lock (``cellplane_api.quotas``): over quota is
    ``QuotaExceeded`` with nothing written; with ``min_count`` below
    ``count``, as many as fit (at least ``min_count``) are made. Without
    ``quotas`` nothing is counted (the project's own tools and tests).

    With ``cells``, an availability zone no host is in is refused
    (``check_zone``) before anything is written. ``group`` (a server
    group's id, or name in ``project_id``) makes the instances its members;
    ``hints`` are scheduler hints (``scheduling_hints.parse``); ``image_ref``
    is stored with each instance as given (no image service is asked), and
    so is ``description``; each instance's ``launch_index`` is its place
    among the ``count``, from 0. ``flavor`` is a flavor's name or id, or its
    record when the caller has read it already.
    """
    if not 1 <= count <= MAX_COUNT:
        raise ServerError(f'--count must be between 1 and {MAX_COUNT}, not {count}')
    if not name or not name.strip():
        raise ServerError('a server name must not be empty or blank')
    if len(name) > NAME_MAX:
        raise ServerError(f'a server name has at most {NAME_MAX} characters, not {len(name)}')
    # What each attempt asked for, in order. A write whose connection was
    # dropped may have committed: its instances' build requests tell.
    attempts: list[tuple[RequestSpec, list[Instance]]] = []

    def recorded() -> None:
        # The compute API has read the flavor already (is it visible to the caller?).
        found = (flavor if isinstance(flavor, api_flavors.FlavorRecord)
                 else api_flavors.get(api_engine, flavor))
        if availability_zone is not None and cells is not None:
            check_zone(api_engine, cells, availability_zone, default_zone=default_zone,
                       cell_timeout=cell_timeout)
        if found.disabled:
            raise ServerError(f'flavor {found.name} is disabled')
        payload_flavor = flavor_payload(found)
        properties = dict(image_properties or {})
        instance_group = None
        if group is not None:
            try:
                found_group = server_groups.get(api_engine, group, project_id=project_id)
            except server_groups.ServerGroupError as exc:
                raise ServerError(str(exc)) from None
            if found_group.project_id != project_id:
                raise ServerError(f'server group {found_group.uuid} belongs to project '
                                  f'{found_group.project_id}, not {project_id}')
            instance_group = group_payload(found_group)
        if min_count is not None and not 1 <= min_count <= count:
            raise ServerError(f'min_count must be between 1 and {count}, not {min_count}')

        def request(count: int) -> tuple[RequestSpec, list[Instance]]:
            spec = RequestSpec(flavor=payload_flavor, project_id=project_id, user_id=user_id,
                               num_instances=count, image_properties=properties,
                               availability_zone=availability_zone,
                               scheduler_hints={k: list(v) for k, v in (hints or {}).items()},
                               instance_group=instance_group, requested_networks=requested_networks,
                               image_ref=image_ref)
            made = [Instance(uuid=str(uuidlib.uuid4()), project_id=project_id,
                             user_id=user_id, flavor=payload_flavor,
                             display_name=display_name, image_properties=properties,
                             availability_zone=availability_zone, image_ref=image_ref,
                             description=description, launch_index=index)
                    for index, display_name in enumerate(display_names(name, count))]
            attempts.append((spec, made))
            return spec, made

        if quotas is None:
            spec, asked = request(count)
            build_requests.record(api_engine, asked, spec)
        else:
            group_uuid = instance_group.uuid if instance_group is not None else None
            try:
                # What each instance will claim: unified limits count every class.
                resources = payload_flavor.placement_resources()
            except ValueError:
                resources = None
            # What the driver reads elsewhere (unified limits: Keystone), before the lock.
            prepared = quotas.prepare(project_id)
            with api_engine.connect() as conn:
                counted = None
                if instance_group is None and conn.dialect.name == 'postgresql':
                    # The limits read and, when nothing is counted (Nova takes no lock
                    # then either), the create's one statement (``record_in``) each its
                    # own transaction: no BEGIN and COMMIT round trips.
                    with reads.autocommit(conn):
                        counted = quotas.counts_servers(conn, project_id, prepared)
                        if not counted:
                            spec, asked = request(count)
                            build_requests.record_in(conn, asked, spec)
                    conn.commit()   # nothing is pending: psycopg2 sends nothing
                if counted is None or counted:
                    with conn.begin():
                        if counted is None:
                            counted = quotas.counts_servers(conn, project_id, prepared)
                        if counted:
                            # Held until commit: this project's other creates count what this
                            # one writes.
                            quota_locks.hold(conn, project_id)
                        fitting = quotas.check_servers(
                            conn, project_id, vcpus=found.vcpus, memory_mb=found.memory_mb,
                            min_count=min_count or count, max_count=count, group_uuid=group_uuid,
                            resources=resources, prepared=prepared)
                        spec, asked = request(fitting)
                        build_requests.record_in(conn, asked, spec)
                        quotas.recheck_servers(conn, project_id, fitting, group_uuid)

    def written() -> bool:
        return bool(attempts) and bool(build_requests.get_many(
            api_engine, [attempts[-1][1][0].uuid]))

    away.again_if_dropped(recorded, done=written)
    spec, asked = attempts[-1]
    uuids = [i.uuid for i in asked]
    try:
        conductor.schedule_and_build_instances(ctxt, spec, uuids)
    except Exception as exc:
        # Nobody will schedule them: shown in ERROR rather than BUILD forever.
        build_requests.fail(api_engine, uuids, f'the request could not be sent to the '
                                               f'super conductor: {exc}')
        raise
    return uuids


def group_payload(group: server_groups.ServerGroup) -> InstanceGroup:
    """What the request spec carries of a group: its identity and policy, no members.

    The scheduler reads the members itself; the super conductor adds them
    for the cell.
    """
    return InstanceGroup(uuid=group.uuid, name=group.name,
                         policy=ANTI_AFFINITY if group.anti else AFFINITY,
                         soft=not group.hard, level=group.level,
                         max_per_domain=group.max_per_domain)


def cell_of(api_engine: Engine, instance_uuid: str) -> str | None:
    """The uuid of the cell the instance is in; None while it has none. ``ServerNotFound`` if unknown."""
    mapped = _mappings(api_engine, [instance_uuid])
    if not mapped:
        raise ServerNotFound(f'no server with uuid {instance_uuid}')
    return mapped[0][1]


def _mappings(api_engine: Engine, uuids: Iterable[str] | None = None
              ) -> list[tuple[str, str | None]]:
    """(instance uuid, cell uuid or None) in creation order."""
    return [(uuid, cell) for uuid, cell, _ in _mappings_with_delete(api_engine, uuids)]


def _mappings_with_delete(api_engine: Engine, uuids: Iterable[str] | None = None
                          ) -> list[tuple[str, str | None, bool]]:
    """(instance uuid, cell uuid or None, delete asked) in creation order."""
    return instance_mappings.cell_uuids_of(api_engine, uuids)


def _from_build_request(request: build_requests.BuildRequest) -> Server:
    instance = request.instance
    return Server(uuid=instance.uuid, name=instance.display_name,
                  status=ERROR if request.failed else BUILD,
                  task_state=None if request.failed else instance.task_state,
                  flavor=instance.flavor.name, cell=None, host=None, node=None,
                  fault=request.fault_message, created_at=request.created_at,
                  project_id=instance.project_id, user_id=instance.user_id,
                  availability_zone=instance.availability_zone,
                  flavor_id=instance.flavor.flavorid, updated_at=request.created_at,
                  image_ref=instance.image_ref, flavor_spec=instance.flavor,
                  description=instance.description, launch_index=instance.launch_index)


def _flavor(stored) -> Flavor | None:
    try:
        return Flavor.from_primitive(stored)
    except Exception:  # noqa: BLE001 - a row written by another version still lists
        return None


@functools.lru_cache(maxsize=1024)
def _flavor_of_text(text: str) -> tuple[Flavor | None, str]:
    """A stored flavor's JSON text, decoded and checked once however many rows carry it;
    with its name (``?`` when unreadable). Flavors are frozen: the same one is shared."""
    try:
        stored = json.loads(text)
    except (TypeError, ValueError):
        return None, '?'
    flavor = _flavor(stored)
    return flavor, _flavor_name(stored, flavor)


def _flavor_name(stored, flavor: Flavor | None) -> str:
    if flavor is not None:
        return flavor.name
    return str((stored or {}).get('name', '?')) if isinstance(stored, dict) else '?'


@dataclasses.dataclass(frozen=True)
class CellFilter:
    """What a list will keep, asked of the cells' queries so they return fewer rows: those
    updated since ``changed_since`` (or never), in one of ``vm_states`` (None: any).

    A superset of the list's own filters, which still run on what is read.
    """

    changed_since: datetime.datetime | None = None
    vm_states: frozenset[str] | None = None


def vm_states_of(statuses: Iterable[str]) -> frozenset[str] | None:
    """The vm_states a server in one of ``statuses`` can be in (``_status``); None: any."""
    states: set[str] = set()
    for status in statuses:
        if status in (REVERT_RESIZE, REBUILD):
            return None     # from the task state, whatever the vm_state
        if status in (RESIZE, MIGRATING):
            states.add(instance_states.ACTIVE)
        states.update(vm for vm, shown in _STATUS_OF_VM_STATE.items() if shown == status)
        states.add(status.lower())  # a vm_state shown as itself, upper-cased
    return frozenset(states)


def _read_cell(engine: Engine, cell: CellMapping, uuids: Sequence[str], *,
               with_events: bool = False,
               accepted_at: Mapping[str, datetime.datetime] | None = None,
               project_id: str | None = None,
               narrowed: CellFilter | None = None) -> dict[str, Server | None]:
    """The servers of ``uuids`` this cell has; created when ``accepted_at`` says, if it does.

    ``project_id``: the project every one of ``uuids`` belongs to (its rows are asked for).
    ``narrowed``: only the rows it may match are read; the others the cell has
    are None (in the cell, not wanted).
    """
    accepted_at = accepted_at or {}
    error = instance_states.ERROR
    with reads.connect(engine) as conn:
        if narrowed is None:
            rows = instances.view_rows(conn, uuids, project_id=project_id)
            found: dict[str, Server | None] = {}
        else:
            rows = instances.view_rows(conn, uuids, project_id=project_id,
                                       changed_since=narrowed.changed_since,
                                       vm_states=narrowed.vm_states)
            found = dict.fromkeys(instances.present(conn, uuids, project_id=project_id))
        # The newest fault of each instance is the one shown (for those in ERROR).
        errored = [row[0] for row in rows if row[2] == error]
        faults = {uuid: found[-1]['message'] + (
                      f'\n{found[-1]["details"]}' if found[-1]['details'] else '')
                  for uuid, found in (instances.faults_of_many(conn, errored).items()
                                      if errored else ())}
        events = instance_actions.histories(conn, uuids) if with_events else {}
    name, cell_uuid = cell.name, cell.uuid
    # A list builds thousands: ``_server``'s work inline, and the status of a
    # server with no task (nearly all) looked up rather than worked out.
    new, set_field, status_of = object.__new__, object.__setattr__, _STATUS_OF_VM_STATE
    for (uuid, display_name, vm_state, task_state, flavor_text, host, node, created_at,
         updated_at, project, user_id, zone, launched_at, image_ref, description,
         launch_index) in rows:
        flavor, flavor_name = _flavor_of_text(flavor_text)
        server = found[uuid] = new(Server)
        set_field(server, '__dict__', {
            'uuid': uuid, 'name': display_name,
            'status': (status_of.get(vm_state) or vm_state.upper() if task_state is None
                       else _status(vm_state, task_state)),
            'task_state': task_state, 'flavor': flavor_name, 'cell': name, 'host': host,
            'node': node, 'fault': faults.get(uuid) if vm_state == error else None,
            'created_at': accepted_at.get(uuid, created_at),
            'events': tuple(events.get(uuid, ())) if with_events else (),
            'project_id': project, 'user_id': user_id, 'availability_zone': zone,
            'flavor_id': flavor.flavorid if flavor else None, 'updated_at': updated_at,
            'launched_at': launched_at, 'image_ref': image_ref, 'flavor_spec': flavor,
            'cell_uuid': cell_uuid, 'description': description,
            'launch_index': launch_index or 0})
    return found


def list_servers(api_engine: Engine, cells: CellDatabases,
                 uuids: Iterable[str] | None = None, *, with_events: bool = False,
                 include_deleted: bool = False, project_id: str | None = None,
                 narrowed: CellFilter | None = None,
                 cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> list[Server]:
    """Every server (or those of ``uuids``, or of ``project_id``), in creation order.

    ``narrowed``: the servers of a cell it rules out are not listed (it may
    let through some that do not match it: the caller filters).

    The cells are read at the same time; one that has not answered within
    ``cell_timeout`` seconds, or whose database fails, has its instances
    listed UNKNOWN with the cell named and the reason, except those whose
    delete was asked: they count as DELETED (left out unless
    ``include_deleted``), so a deleted server never reappears.

    An instance whose mapping names a cell but that its cell does not show
    yet (the super conductor is between the two writes) is read from its
    build request, or skipped if that is gone too. One whose mapping named
    no cell and whose build request is gone when it is read was placed in
    between (or deleted): its mapping is read again, once.

    A read whose connection the server dropped (terminated, restarted) is
    read again once, on a fresh connection.
    """
    if uuids is not None:
        uuids = list(uuids)   # read twice if read again
    return away.again_if_dropped(lambda: _list_servers(
        api_engine, cells, uuids, with_events=with_events, include_deleted=include_deleted,
        cell_timeout=cell_timeout, read_again=True, project_id=project_id,
        narrowed=narrowed))


def _list_servers(api_engine: Engine, cells: CellDatabases, uuids, *, with_events: bool,
                  include_deleted: bool, cell_timeout: float,
                  read_again: bool, project_id: str | None = None,
                  narrowed: CellFilter | None = None) -> list[Server]:
    mapped = instance_mappings.mapped_in_cells(api_engine, uuids, project_id=project_id)
    delete_asked = set()
    # A server was created when the API accepted it (Nova's created_at), not
    # when its cell wrote its row: one order whether it is placed yet or not.
    accepted_at = {}
    by_cell: dict[str, list[str]] = {}
    for instance_uuid, cell_uuid, queued, at in mapped:
        if queued:
            delete_asked.add(instance_uuid)
        if at is not None:
            accepted_at[instance_uuid] = at
        if cell_uuid is not None:
            in_cell = by_cell.get(cell_uuid)
            if in_cell is None:
                in_cell = by_cell[cell_uuid] = []
            in_cell.append(instance_uuid)
    # None: in its cell, ruled out by ``narrowed``.
    found: dict[str, Server | None] = {}
    cell_of = {cell_uuid: cells.mapping(cell_uuid) for cell_uuid in by_cell}

    def reader(cell_uuid: str) -> Callable[[], dict[str, Server]]:
        return lambda: away.again_if_dropped(lambda: _read_cell(
            cells.engine(cell_uuid), cell_of[cell_uuid], by_cell[cell_uuid],
            with_events=with_events, accepted_at=accepted_at, project_id=project_id,
            narrowed=narrowed))
    answers = gather({cell_uuid: reader(cell_uuid) for cell_uuid in by_cell}, cell_timeout)
    for cell_uuid, answer in answers.items():
        if not isinstance(answer, BaseException):
            found.update(answer)
            continue
        if not isinstance(answer, (sa.exc.SQLAlchemyError, CellTimeout)):
            raise answer
        cell = cell_of[cell_uuid]
        reason = (f'the database of cell {cell.name} cannot be read: '
                  f'{type(answer).__name__}: {(str(answer).splitlines() or [""])[0]}')
        # A server whose delete was asked is not listed again while its
        # cell cannot say whether it is gone yet (unless deleted are wanted).
        # Its owner and creation time are the API database's.
        owners = instance_mappings.owners_of(api_engine, by_cell[cell_uuid])
        found.update({u: Server(uuid=u, name=None,
                                status=DELETED if u in delete_asked else UNKNOWN,
                                task_state=None, flavor='?', cell=cell.name, host=None,
                                node=None, fault=reason,
                                created_at=owners.get(u, {}).get('created_at'),
                                project_id=owners.get(u, {}).get('project_id'),
                                user_id=owners.get(u, {}).get('user_id'),
                                cell_uuid=cell_uuid)
                      for u in by_cell[cell_uuid]})
    pending = build_requests.get_many(
        api_engine, [u for u, _, _, _ in mapped if u not in found])
    placed_meanwhile = [u for u, cell, _, _ in mapped
                        if cell is None and u not in found and u not in pending]
    if placed_meanwhile and read_again:
        found.update({s.uuid: s for s in _list_servers(
            api_engine, cells, placed_meanwhile, with_events=with_events,
            include_deleted=True, cell_timeout=cell_timeout, read_again=False)})
    servers = []
    for instance_uuid, _, _, accepted in mapped:
        server = found.get(instance_uuid)
        if server is None:
            if instance_uuid not in pending:
                continue
            server = _from_build_request(pending[instance_uuid])
        if server.status == DELETED and not include_deleted:
            continue
        if accepted is not None and server.created_at != accepted:
            server = dataclasses.replace(server, created_at=accepted)
        servers.append(server)
    return servers


def find(api_engine: Engine, cells: CellDatabases, name_or_id: str, *,
         cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> str:
    """The uuid of the server with this id, or else with exactly this name.

    A name several servers have is refused (``AmbiguousServerName``, listing
    their ids); none: ``ServerNotFound``.
    """
    if _mappings(api_engine, [name_or_id]):
        return name_or_id
    named = [s for s in list_servers(api_engine, cells, cell_timeout=cell_timeout)
             if s.name == name_or_id]
    if not named:
        raise ServerNotFound(f'no server with id or name {name_or_id!r}')
    if len(named) > 1:
        raise AmbiguousServerName(
            f'{len(named)} servers are named {name_or_id!r} ('
            + ', '.join(s.uuid for s in named[:10])
            + (', ...' if len(named) > 10 else '') + '); give an id')
    return named[0].uuid


def show(api_engine: Engine, cells: CellDatabases, instance_uuid: str, *,
         cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> Server:
    """One server with its action events (every scheduling and build attempt)."""
    found = list_servers(api_engine, cells, [instance_uuid], with_events=True,
                         include_deleted=True, cell_timeout=cell_timeout)
    if not found:
        raise ServerNotFound(f'no server with uuid {instance_uuid}')
    return found[0]


def delete(api_engine: Engine, cells: CellDatabases,
           compute_api_for: Callable[[CellMapping], ComputeAPI], ctxt: RequestContext,
           instance_uuid: str) -> str:
    """Delete a server; what was done, in words.

    In a cell: ``terminate_instance`` is cast to its host (the agent frees its
    Placement allocations and reports it DELETED). Without a cell: its build
    request is discarded; one a super conductor is placing right now is only
    marked deleted, and that super conductor (or, if it died, whoever resumes
    its work) withdraws the instance and its claim, then removes it.
    """
    mapped = _mappings(api_engine, [instance_uuid])
    if not mapped:
        raise ServerNotFound(f'no server with uuid {instance_uuid}')
    _, cell_uuid = mapped[0]
    if cell_uuid is None:
        if build_requests.discard(api_engine, instance_uuid):
            server_groups.remove_members(api_engine, [instance_uuid])
            return 'deleted (it had not reached a cell)'
        # Placed in a cell between our two reads.
        mapped = _mappings(api_engine, [instance_uuid])
        cell_uuid = mapped[0][1] if mapped else None
        if cell_uuid is None:
            raise ServerNotFound(f'no server with uuid {instance_uuid}')
    cell = cells.mapping(cell_uuid)
    server = _read_cell(cells.engine(cell_uuid), cell, [instance_uuid]).get(instance_uuid)
    if server is None or server.status == DELETED:
        server_groups.remove_members(api_engine, [instance_uuid])
        return 'already deleted'
    if not server.host:
        raise ServerError(f'server {instance_uuid} has no host in cell {cell.name}; '
                          f'nothing to terminate it on')
    instance_mappings.queue_for_delete(api_engine, instance_uuid)
    compute_api_for(cell).terminate_instance(ctxt, server.host, instance_uuid)
    # A deleted member holds no place and does not keep its group alive.
    server_groups.remove_members(api_engine, [instance_uuid])
    return f'terminate cast to {server.host} in cell {cell.name}'


COMPUTE_BINARY = 'cellplane-compute'


def host_statuses(cells: CellDatabases, found: Sequence[Server], *, service_down_time: float,
                  cell_timeout: float = DEFAULT_CELL_TIMEOUT) -> dict[str, str]:
    """Server uuid -> the state of its host's compute service, in Nova's words.

    ``DOWN`` (forced down by an operator); ``MAINTENANCE`` (disabled);
    ``UP``; ``UNKNOWN`` (no heartbeat within ``service_down_time`` seconds,
    or its cell cannot be read); ``""`` (no host, or a host without a
    service row). The order is Nova's: forced down, then disabled, then
    the heartbeat.
    """
    hosts_by_cell: dict[str, set[str]] = {}
    for server in found:
        if server.host and server.cell_uuid:
            hosts_by_cell.setdefault(server.cell_uuid, set()).add(server.host)

    def reader(cell_uuid: str) -> Callable[[], dict[str, dict]]:
        return lambda: {row['host']: row for row in services.list_all(cells.engine(cell_uuid))
                        if row['binary'] == COMPUTE_BINARY}
    answers = gather({cell_uuid: reader(cell_uuid) for cell_uuid in hosts_by_cell},
                     cell_timeout)
    liveness = services.Liveness.at(service_down_time)
    statuses = {}
    for server in found:
        rows = answers.get(server.cell_uuid) if server.host else None
        if rows is None:
            statuses[server.uuid] = ''
        elif isinstance(rows, BaseException):
            statuses[server.uuid] = 'UNKNOWN'
        elif server.host not in rows:
            statuses[server.uuid] = ''
        elif rows[server.host].get('forced_down'):
            statuses[server.uuid] = 'DOWN'
        elif rows[server.host]['disabled']:
            statuses[server.uuid] = 'MAINTENANCE'
        else:
            statuses[server.uuid] = ('UNKNOWN' if liveness.is_down(
                rows[server.host]['last_seen_at']) else 'UP')
    return statuses
