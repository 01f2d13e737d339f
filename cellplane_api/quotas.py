"""Quotas of the API role: each project's limits, its usage, and the check every create passes.

The ``database`` driver (``DatabaseQuotas``), Nova's DbQuotaDriver with
``count_usage_from_placement``:

- **limits**: the ``[quota]`` options, replaced per project by the rows of
  ``cellplane.objects.quotas`` (``os-quota-sets`` update, ``cellplane quota
  set``); -1 is unlimited;
- **usage**: ``instances`` are the project's instance mappings not being
  deleted (in a cell or still build requests, ERROR ones too);
  ``cores``/``ram`` are Placement's ``GET /usages?project_id=`` (the
  project's INSTANCE consumers' VCPU and MEMORY_MB) plus the flavors of its
  build requests not placed yet that hold no allocation (a build request a
  super conductor holds may have claimed already: Placement is asked);
  ``server_groups`` are its groups, ``server_group_members`` a group's
  members;
- **the check** (``check_servers``) runs in the transaction that writes the
  build requests, after ``cellplane.objects.quota_locks.hold`` locked the
  project's row (when ``counts_servers`` says a limit applies: a project
  whose instances, cores, RAM and group members are all unlimited has
  nothing to count, and its creates do not queue for the lock, as Nova
  takes none): two creates of one project count and write one after the
  other, so together they cannot pass the limit, and a refused create has
  written nothing. After writing, the instances are counted again in the
  same transaction (a writer that took no lock is caught there, and the
  whole transaction is rolled back). A server group create is checked
  before and counted again after, its group removed if over (Nova's
  recheck): the driver is the server groups' ``GroupQuota`` (``check``).

Over quota is ``QuotaExceeded`` with Nova's message ("Quota exceeded for
instances: Requested 3, but already used 9 of 10 instances"); with a
``min_count`` below the count asked, as many as fit are made, as Nova does.
"""
from __future__ import annotations

import dataclasses
import weakref
from typing import Callable, Mapping

from sqlalchemy.engine import Connection, Engine

from cellplane.objects import build_requests, instance_mappings, server_groups
from cellplane.objects import quotas as overrides

INSTANCES = 'instances'
CORES = 'cores'
RAM = 'ram'
SERVER_GROUPS = 'server_groups'
SERVER_GROUP_MEMBERS = 'server_group_members'
COUNTED = (INSTANCES, CORES, RAM, SERVER_GROUPS, SERVER_GROUP_MEMBERS)
# Shown with Nova's names and defaults; nothing in cellplane counts against them.
NOT_COUNTED = ('metadata_items', 'injected_files', 'injected_file_content_bytes',
               'injected_file_path_bytes', 'key_pairs')
# Nova's network-era resources, shown below microversion 2.36: unlimited
# unless set (cellplane has no networks, nothing counts against them).
NETWORK = ('fixed_ips', 'floating_ips', 'security_groups', 'security_group_rules')
RESOURCES = COUNTED + NOT_COUNTED + NETWORK
UNLIMITED = -1
# [quota] driver values.
DATABASE = 'database'
UNIFIED_LIMITS = 'unified_limits'
# Leased build requests whose allocations are asked of Placement one by one;
# past this many the rest are counted as unclaimed (too much, never too little).
MAX_ALLOCATION_LOOKUPS = 100
_CONF_NAMES = {'injected_file_path_bytes': 'injected_file_path_length'}


class QuotaExceeded(Exception):
    """A create that would pass a limit; the message is Nova's.

    The one quota refusal: servers, their group's members, and server groups
    (``cellplane_api.server_groups`` raises this class under the same name).
    """


def defaults_from_conf(conf) -> dict[str, int]:
    """Resource -> its ``[quota]`` default."""
    defaults = {r: int(getattr(conf.quota, _CONF_NAMES.get(r, r)))
                for r in COUNTED + NOT_COUNTED}
    return {**defaults, **{r: UNLIMITED for r in NETWORK}}


def _limited(limit: int) -> bool:
    return limit != UNLIMITED


def over_message(overs: list[str], requested: Mapping[str, object],
                 used: Mapping[str, int], limits: Mapping[str, int]) -> str:
    """Nova's TooManyInstances message for the resources in ``overs``."""
    names = sorted(overs)
    join = ', '.join
    return (f'Quota exceeded for {join(names)}: Requested '
            f'{join(str(requested[r]) for r in names)}, but already used '
            f'{join(str(used[r]) for r in names)} of '
            f'{join(str(limits[r]) for r in names)} {join(names)}')


def fit(limits: Mapping[str, int], used: Mapping[str, int], *, vcpus: int, memory_mb: int,
        min_count: int, max_count: int) -> int:
    """How many of ``max_count`` instances fit (at least ``min_count``), or ``QuotaExceeded``.

    As Nova's ``check_num_instances_quota``: all of them if they fit; else
    as many as the tightest of instances, cores and RAM leaves room for, if
    that is ``min_count`` or more; else refused, naming every resource the
    ``max_count`` instances would pass.
    """
    per_instance = {INSTANCES: 1, CORES: vcpus, RAM: memory_mb}
    overs = [r for r, each in per_instance.items()
             if _limited(limits[r]) and used[r] + each * max_count > limits[r]]
    if not overs:
        return max_count
    allowed = max_count
    for resource, each in per_instance.items():
        if _limited(limits[resource]) and each:
            allowed = min(allowed, max(0, limits[resource] - used[resource]) // each)
    if allowed >= min_count and allowed > 0:
        return allowed
    requested = {INSTANCES: str(min_count) if min_count == max_count
                 else f'{min_count}-{max_count}',
                 CORES: vcpus * max_count, RAM: memory_mb * max_count}
    raise QuotaExceeded(over_message(overs, requested, used, limits))


@dataclasses.dataclass(frozen=True)
class Usage:
    """What a project uses of each counted resource (``server_group_members``: not per project)."""

    instances: int
    cores: int
    ram: int
    server_groups: int

    def as_dict(self) -> dict[str, int]:
        return {INSTANCES: self.instances, CORES: self.cores, RAM: self.ram,
                SERVER_GROUPS: self.server_groups}


def placement_usage(conn: Connection, placement, project_id: str) -> dict[str, int]:
    """Resource class -> what the project's instances use of it, placed or still to be.

    Placement's ``GET /usages?project_id=`` (its INSTANCE consumers) plus
    the flavors of the project's build requests that hold no allocation
    yet, as Nova's ``count_usage_from_placement``. Both drivers count
    with it: the database one its cores and RAM, unified limits every
    ``class:`` limit.
    """
    # Build requests, then which of them hold a claim, then Placement's
    # usages: a claim seen in the second read is in the third (counted
    # there); one made after the second read is counted from its build
    # request, and once more in the usages if it lands before the third
    # (too much, never too little). Reading the usages before the claims
    # would miss a claim landing between the two reads.
    pending = build_requests.pending_of_project(conn, project_id)
    leased = [p.instance_uuid for p in pending if p.leased][:MAX_ALLOCATION_LOOKUPS]
    claimed = {uuid for uuid in leased if placement.get_allocations(uuid).allocations}
    placed = placement.usages(project_id).get('INSTANCE', {})
    used = {rc: int(amount) for rc, amount in placed.items()}
    for request in pending:
        if request.instance_uuid not in claimed:
            for rc, amount in request.resources.items():
                used[rc] = used.get(rc, 0) + amount
    return used


class DatabaseQuotas:
    """The ``database`` driver: defaults from ``[quota]``, overrides in the API database.

    ``placement`` is the Placement client, or a function that makes it
    (the CLI makes it only when cores or RAM must be counted).
    """

    # os-quota-sets update and delete, `cellplane quota set/delete` change its limits.
    settable = True

    def __init__(self, api_engine: Engine, defaults: Mapping[str, int], placement):
        self.api_engine = api_engine
        self._defaults = dict(defaults)
        self._placement = placement
        # Connection -> (project, limits) that counts_servers read in its transaction.
        self._read: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @property
    def placement(self):
        if not hasattr(self._placement, 'usages'):
            self._placement = self._placement()
        return self._placement

    def defaults(self) -> dict[str, int]:
        return dict(self._defaults)

    def limits(self, project_id: str, *, conn: Connection | None = None) -> dict[str, int]:
        """The project's limit of every resource: its override, else the default."""
        own = overrides.overrides(conn if conn is not None else self.api_engine, project_id)
        return {r: own.get(r, default) for r, default in self._defaults.items()}

    def set_limits(self, project_id: str, changes: Mapping[str, int], *,
                   force: bool = False) -> dict[str, int]:
        """Give the project these limits; its limits afterwards.

        Without ``force`` a counted resource's new limit must not be below
        what the project uses (``ValueError`` in Nova's words).
        """
        unknown = sorted(set(changes) - set(RESOURCES))
        if unknown:
            raise ValueError(f'unknown quota resource(s) {", ".join(unknown)} '
                             f'(known: {", ".join(RESOURCES)})')
        bad = sorted(r for r, v in changes.items() if v < UNLIMITED)
        if bad:
            raise ValueError(f'Quota limit {changes[bad[0]]} for {bad[0]} must be -1 '
                             f'(unlimited) or more.')
        if not force:
            counted = [r for r in changes if r in (INSTANCES, CORES, RAM, SERVER_GROUPS)
                       and _limited(changes[r])]
            if counted:
                used = self.usage(project_id, need_placement=bool(
                    {CORES, RAM} & set(counted))).as_dict()
                for resource in sorted(counted):
                    if changes[resource] < used[resource]:
                        raise ValueError(
                            f'Quota limit {changes[resource]} for {resource} must be '
                            f'greater than or equal to already used and reserved '
                            f'{used[resource]}.')
        overrides.set_limits(self.api_engine, project_id, changes)
        return self.limits(project_id)

    def forget(self, project_id: str) -> None:
        """The project's limits are the defaults again."""
        overrides.forget(self.api_engine, project_id)

    def usage(self, project_id: str, *, need_placement: bool = True,
              conn: Connection | None = None) -> Usage:
        """What the project uses now (cores and RAM 0 without ``need_placement``)."""
        if conn is None:
            with self.api_engine.connect() as own:
                return self.usage(project_id, need_placement=need_placement, conn=own)
        instances = instance_mappings.count_of_project(conn, project_id)
        groups = server_groups.count_of_project(conn, project_id)
        cores = ram = 0
        if need_placement:
            cores, ram = self._cores_and_ram(conn, project_id)
        return Usage(instances, cores, ram, groups)

    def _cores_and_ram(self, conn: Connection, project_id: str) -> tuple[int, int]:
        used = placement_usage(conn, self.placement, project_id)
        return used.get('VCPU', 0), used.get('MEMORY_MB', 0)

    def prepare(self, project_id: str) -> None:
        """Nothing to read before the quota lock: the limits are read in the create's transaction."""
        return None

    def counts_servers(self, conn: Connection, project_id: str, prepared: None = None) -> bool:
        """Whether a server create of the project is counted (its instances, cores, RAM or
        group members limited): then ``servers.create`` takes the project's quota lock.

        The limits are read here, in the create's transaction, once: the
        check and the recheck use them. A limit set while the create runs
        applies from the next one (the lock does not cover limit changes).
        """
        limits = self.limits(project_id, conn=conn)
        self._read[conn] = (project_id, limits)
        return any(_limited(limits[r]) for r in (INSTANCES, CORES, RAM, SERVER_GROUP_MEMBERS))

    def _create_limits(self, conn: Connection, project_id: str, *, last: bool = False
                       ) -> dict[str, int]:
        """The limits ``counts_servers`` read in this transaction, else read now."""
        read = self._read.pop(conn, None) if last else self._read.get(conn)
        if read is not None and read[0] == project_id:
            return read[1]
        return self.limits(project_id, conn=conn)

    def check_servers(self, conn: Connection, project_id: str, *, vcpus: int, memory_mb: int,
                      min_count: int, max_count: int, group_uuid: str | None = None,
                      resources: Mapping[str, int] | None = None, prepared: None = None) -> int:
        """How many servers of this flavor the project may create now (``fit``), or ``QuotaExceeded``.

        (``resources``, the flavor's Placement request, and ``prepared``
        are for unified limits; this driver limits cores and RAM only and
        prepares nothing.) Call it in the transaction that writes them, after
        ``quota_locks.hold`` for the project, and ``recheck_servers`` after
        writing them.
        """
        limits = self._create_limits(conn, project_id)
        need_placement = _limited(limits[CORES]) or _limited(limits[RAM])
        if not any(_limited(limits[r]) for r in (INSTANCES, CORES, RAM, SERVER_GROUP_MEMBERS)):
            return max_count
        used = self.usage(project_id, need_placement=need_placement, conn=conn).as_dict()
        count = fit(limits, used, vcpus=vcpus if _limited(limits[CORES]) else 0,
                    memory_mb=memory_mb if _limited(limits[RAM]) else 0,
                    min_count=min_count, max_count=max_count)
        if group_uuid is not None and _limited(limits[SERVER_GROUP_MEMBERS]):
            members = server_groups.member_count(conn, group_uuid)
            if members + count > limits[SERVER_GROUP_MEMBERS]:
                raise QuotaExceeded('Quota exceeded, too many servers in group')
        return count

    def recheck_servers(self, conn: Connection, project_id: str, written: int,
                        group_uuid: str | None = None) -> None:
        """After writing ``written`` servers, in the same transaction: still within the limits?"""
        limits = self._create_limits(conn, project_id, last=True)
        if _limited(limits[INSTANCES]):
            now = instance_mappings.count_of_project(conn, project_id)
            if now > limits[INSTANCES]:
                raise QuotaExceeded(over_message(
                    [INSTANCES], {INSTANCES: written}, {INSTANCES: now - written}, limits))
        if group_uuid is not None and _limited(limits[SERVER_GROUP_MEMBERS]):
            if server_groups.member_count(conn, group_uuid) > limits[SERVER_GROUP_MEMBERS]:
                raise QuotaExceeded('Quota exceeded, too many servers in group')

    def check(self, project_id: str, user_id: str | None, delta: int) -> None:
        """The server groups' quota (``cellplane_api.server_groups.GroupQuota``): room for ``delta`` more?

        ``server_groups.create`` asks with ``delta=1`` before writing a group
        and ``delta=0`` after (is the project over now, counting it?); over
        the limit is ``QuotaExceeded`` in Nova's words. Groups are counted
        per project (``user_id`` is not: per-user quotas are not built).
        """
        limit = self.limits(project_id)[SERVER_GROUPS]
        if not _limited(limit):
            return
        with self.api_engine.connect() as conn:
            used = server_groups.count_of_project(conn, project_id)
        if used + delta > limit:
            raise QuotaExceeded('Quota exceeded, too many server groups.')


def from_conf(conf, api_engine: Engine, placement: Callable | object) -> DatabaseQuotas:
    """The ``database`` driver over the API database and Placement (``quota_drivers.from_conf`` picks)."""
    return DatabaseQuotas(api_engine, defaults_from_conf(conf), placement)
