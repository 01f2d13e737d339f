"""The ``unified_limits`` quota driver: limits in Keystone, read and enforced with oslo.limit.

As Nova's ``UnifiedLimitsDriver`` (``nova/limit/placement.py`` and
``nova/limit/local.py``):

- **limits** are Keystone's: a *registered limit* per resource of the
  compute service (the endpoint ``[oslo_limit]`` names: ``endpoint_id``, or
  ``endpoint_service_type``/``endpoint_service_name`` with
  ``endpoint_region_name``) is every project's default, a project *limit*
  replaces it for one project. The resources: ``servers``,
  ``class:VCPU``, ``class:MEMORY_MB``, ``class:DISK_GB`` (any
  ``class:<resource class>`` a flavor asks for), ``server_groups``,
  ``server_group_members``; shown through os-quota-sets and limits under
  Nova's legacy names (``instances``, ``cores``, ``ram``...).
  ``[quota] unified_limits_resource_strategy``/``_resource_list`` say what
  a resource with no limit in Keystone means (none allowed, or unlimited);
- **usage** is counted as the database driver counts it
  (``cellplane_api.quotas.placement_usage``: Placement's ``GET
  /usages?project_id=`` plus build requests not placed yet), and handed to
  oslo.limit's ``Enforcer`` as its usage callback;
- **the check** runs where the database driver's does: in the transaction
  that writes the build requests, under the project's ``quota_locks`` row,
  counted again after the write in the same transaction (a breach rolls
  the whole create back). Keystone is asked before the row is locked
  (``prepare``: the Enforcer and every limit of the project, cached in it),
  so that only the counting happens while it is held.

Over a limit is ``QuotaExceeded`` with oslo.limit's message, as Nova passes
it on ("Project p1 is over a limit for [Resource servers is over limit of
2 due to current usage 2 and delta 1]"). Limits cannot be changed through
cellplane (os-quota-sets update changes nothing, as in Nova): an operator
sets them in Keystone (``openstack registered limit create``, ``openstack
limit create``).
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from typing import Callable, Collection, Mapping

from oslo_config import cfg
from sqlalchemy.engine import Connection, Engine

from cellplane import config
from cellplane.objects import instance_mappings, server_groups
from cellplane_api import quotas

LOG = logging.getLogger(__name__)

SERVERS = 'servers'
SERVER_GROUPS = 'server_groups'
SERVER_GROUP_MEMBERS = 'server_group_members'
CLASS_PREFIX = 'class:'
# cellplane's (Nova's legacy) quota names -> the unified limits' resource names.
LIMIT_NAMES = {
    quotas.INSTANCES: SERVERS,
    quotas.CORES: 'class:VCPU',
    quotas.RAM: 'class:MEMORY_MB',
    quotas.SERVER_GROUPS: SERVER_GROUPS,
    quotas.SERVER_GROUP_MEMBERS: SERVER_GROUP_MEMBERS,
    'metadata_items': 'server_metadata_items',
    'key_pairs': 'server_key_pairs',
    'injected_files': 'server_injected_files',
    'injected_file_content_bytes': 'server_injected_file_content_bytes',
    'injected_file_path_bytes': 'server_injected_file_path_bytes',
}
REQUIRE = 'require'
IGNORE = 'ignore'


class LimitsUnavailable(Exception):
    """Keystone's limits could not be read (no session, no endpoint, Keystone down)."""


# -- the mapping (pure) -----------------------------------------------------------------
def deltas_for(resources: Mapping[str, int], count: int) -> dict[str, int]:
    """What ``count`` instances of a flavor add: ``servers`` and a ``class:`` per resource class.

    ``resources`` is the flavor's Placement request (``Flavor.placement_resources``):
    ``{"VCPU": 2, "MEMORY_MB": 512, "DISK_GB": 1}`` and 3 instances give
    ``{"servers": 3, "class:VCPU": 6, "class:MEMORY_MB": 1536, "class:DISK_GB": 3}``.
    """
    if count < 0:
        raise ValueError(f'count must not be negative, not {count}')
    deltas = {SERVERS: count}
    for rc, amount in sorted(resources.items()):
        if amount:
            deltas[CLASS_PREFIX + rc] = amount * count
    return deltas


def usage_for(names: Collection[str], *, servers: Callable[[], int],
              placed: Callable[[], Mapping[str, int]],
              groups: Callable[[], int] | None = None,
              members: Callable[[], int] | None = None) -> dict[str, int]:
    """oslo.limit's usage callback's answer: each resource of ``names`` counted.

    ``servers`` counts the project's instances, ``placed`` gives resource
    class -> use (asked once, only if a ``class:`` is named; a class
    Placement does not list is 0), ``groups`` its server groups,
    ``members`` a group's members. A name none of them counts is a
    ``ValueError`` (oslo.limit would otherwise take it as 0 used).
    """
    counted: dict[str, int] = {}
    placed_now: Mapping[str, int] | None = None
    for name in names:
        if name == SERVERS:
            counted[name] = servers()
        elif name.startswith(CLASS_PREFIX):
            if placed_now is None:
                placed_now = placed()
            counted[name] = int(placed_now.get(name[len(CLASS_PREFIX):], 0))
        elif name == SERVER_GROUPS and groups is not None:
            counted[name] = groups()
        elif name == SERVER_GROUP_MEMBERS and members is not None:
            counted[name] = members()
        else:
            raise ValueError(f'no usage is counted for resource {name!r}')
    return counted


def enforced(names: Collection[str], have_limit: Collection[str], *, strategy: str,
             listed: Collection[str]) -> list[str]:
    """Which of ``names`` are enforced, given those Keystone has a limit for.

    A resource with a limit (registered or the project's) always is. One
    without: under ``require`` only if it is ``listed`` (it then allows
    none, oslo.limit's 0), under ``ignore`` only if it is not; the others
    are unlimited. Nova's ``unified_limits_resource_strategy``.
    """
    if strategy not in (REQUIRE, IGNORE):
        raise ValueError(f'unknown unified_limits_resource_strategy {strategy!r}')
    have, listed = set(have_limit), set(listed)
    return [n for n in names
            if n in have or (n in listed if strategy == REQUIRE else n not in listed)]


def legacy_limits(limits: Mapping[str, int], enforced_names: Collection[str]) -> dict[str, int]:
    """cellplane's quota name -> limit, from the unified limits' ``limits`` (resource -> limit).

    A resource Keystone has no limit for is 0 if it is enforced (none
    allowed), else -1 (unlimited); Nova's network-era resources are -1.
    Keystone's -1 is unlimited as well.
    """
    shown = {}
    for legacy, name in LIMIT_NAMES.items():
        if name in limits:
            shown[legacy] = int(limits[name])
        else:
            shown[legacy] = 0 if name in enforced_names else quotas.UNLIMITED
    return {**shown, **{r: quotas.UNLIMITED for r in quotas.NETWORK}}


# -- the driver -------------------------------------------------------------------------
@dataclasses.dataclass
class _Limits:
    """One create's oslo.limit Enforcer and every limit Keystone has for its project.

    ``counting`` is the Enforcer's usage callback: what it counts with is
    set by the check, and anew for the recheck.
    """

    enforcer: object
    counting: '_Counting'
    values: dict[str, int]
    # The resources the project has a limit of its own for (the others: registered).
    own: set[str]


class UnifiedLimitsQuotas:
    """The ``unified_limits`` driver: the database driver's interface over Keystone's limits.

    ``enforcer_factory(usage_callback)`` makes an oslo.limit ``Enforcer``
    (one per thread, its limits read anew for each create or read, as
    Nova's new Enforcer per request reads them: a limit changed in Keystone
    applies to the next create); ``placement`` is the Placement client, or
    a function that makes it.
    """

    # os-quota-sets update and delete change nothing; `cellplane quota set` refuses.
    settable = False

    def __init__(self, api_engine: Engine, placement, *, strategy: str = REQUIRE,
                 listed: Collection[str] = (SERVERS,),
                 enforcer_factory: Callable | None = None):
        self.api_engine = api_engine
        self._placement = placement
        self.strategy = strategy
        self.listed = tuple(listed)
        self._enforcer_factory = enforcer_factory or _oslo_limit_enforcer
        self._local = threading.local()

    @property
    def placement(self):
        if not hasattr(self._placement, 'usages'):
            self._placement = self._placement()
        return self._placement

    def _enforcer(self) -> tuple[object, '_Counting']:
        """This thread's Enforcer, its cached limits forgotten (made the first time).

        Making an Enforcer asks Keystone four times (the enforcement model,
        the endpoint, its service and region) for what does not change while
        the process runs; the limits do, so each use starts from an empty
        cache and reads them anew, as a new Enforcer would (Nova makes one
        per request). One per thread: its usage callback and its cache are
        the thread's create's alone.
        """
        local = self._local
        enforcer = getattr(local, 'enforcer', None)
        if enforcer is None or not _forget_cached_limits(enforcer):
            local.counting = _Counting(_no_usage)
            enforcer = local.enforcer = self._enforcer_factory(local.counting)
        local.counting.count = _no_usage
        return enforcer, local.counting

    def prepare(self, project_id: str | None) -> _Limits:
        """A new Enforcer with every limit Keystone has for the project read (and cached in it).

        ``servers.create`` calls it before taking the project's quota lock,
        so that Keystone is not asked while the lock is held.
        """
        try:
            enforcer, counting = self._enforcer()
            values = dict(enforcer.get_registered_limits(None))
            own = dict(enforcer.get_project_limits(project_id, None)) if project_id else {}
        except Exception as exc:
            raise LimitsUnavailable(f'Keystone unified limits could not be read: {exc}') from exc
        return _Limits(enforcer, counting, {**values, **own}, set(own))

    def _enforce(self, limits: _Limits, project_id: str, deltas: dict[str, int]) -> None:
        """oslo.limit's check of the enforced ``deltas``; ``QuotaExceeded`` with its message.

        The resources the project has its own limit for are enforced for
        the project; the others for no project (oslo.limit then compares
        with the registered limit it holds, where for a project it would ask
        Keystone again, per resource, for a project limit there is none
        of). The usage callback counts the project either way, and the
        refusal names it, as one ``enforce`` would.
        """
        from oslo_limit import exception as limit_exceptions

        names = enforced(deltas, set(limits.values), strategy=self.strategy,
                         listed=self.listed)
        overs = []
        for scope, group in ((project_id, [n for n in names if n in limits.own]),
                             (None, [n for n in names if n not in limits.own])):
            if not group:
                continue
            try:
                limits.enforcer.enforce(scope, {n: deltas[n] for n in group})
            except limit_exceptions.ProjectOverLimit as exc:
                overs.extend(exc.over_limit_info_list)
        if overs:
            overs.sort(key=lambda info: info.resource_name)
            raise quotas.QuotaExceeded(str(limit_exceptions.ProjectOverLimit(project_id, overs)))

    # -- what os-quota-sets, limits and `cellplane quota show` read --------------------
    def _shown(self, project_id: str | None) -> dict[str, int]:
        limits = self.prepare(project_id)
        names = enforced(LIMIT_NAMES.values(), set(limits.values), strategy=self.strategy,
                         listed=self.listed)
        return legacy_limits(limits.values, names)

    def defaults(self) -> dict[str, int]:
        """The registered limits, under cellplane's names."""
        return self._shown(None)

    def limits(self, project_id: str, *, conn: Connection | None = None) -> dict[str, int]:
        """The project's limits (its own in Keystone, else the registered ones)."""
        return self._shown(project_id)

    def usage(self, project_id: str, *, need_placement: bool = True,
              conn: Connection | None = None) -> quotas.Usage:
        """What the project uses now, counted as the database driver counts it."""
        if conn is None:
            with self.api_engine.connect() as own:
                return self.usage(project_id, need_placement=need_placement, conn=own)
        used = quotas.placement_usage(conn, self.placement, project_id) if need_placement else {}
        return quotas.Usage(instance_mappings.count_of_project(conn, project_id),
                            used.get('VCPU', 0), used.get('MEMORY_MB', 0),
                            server_groups.count_of_project(conn, project_id))

    def set_limits(self, project_id: str, changes: Mapping[str, int], *,
                   force: bool = False) -> dict[str, int]:
        raise LimitsInKeystone(
            'quotas are Keystone unified limits ([quota] driver = unified_limits): set '
            'them there (openstack limit create --service nova --project P '
            '--resource-limit N servers)')

    def forget(self, project_id: str) -> None:
        raise LimitsInKeystone(
            'quotas are Keystone unified limits ([quota] driver = unified_limits): remove '
            'the project\'s limits there (openstack limit delete)')

    # -- the checks of a create ---------------------------------------------------------
    def counts_servers(self, conn: Connection, project_id: str,
                       prepared: _Limits | None = None) -> bool:
        """Always: the limits are Keystone's, and any class may be limited."""
        return True

    def check_servers(self, conn: Connection, project_id: str, *, vcpus: int, memory_mb: int,
                      min_count: int, max_count: int, group_uuid: str | None = None,
                      resources: Mapping[str, int] | None = None,
                      prepared: _Limits | None = None) -> int:
        """How many of ``max_count`` instances the project may create now (at least ``min_count``).

        As Nova's ``enforce_num_instances_and_flavor``: all of them if they
        fit, else one fewer, down to ``min_count``; none fitting is
        ``QuotaExceeded`` with oslo.limit's message for ``max_count``.
        ``resources`` is the flavor's Placement request (VCPU and
        MEMORY_MB from ``vcpus`` and ``memory_mb`` without it); ``prepared``
        what ``prepare`` read before the lock (read here without it). Call
        it in the transaction that writes them, after ``quota_locks.hold``,
        and ``recheck_servers`` after writing.
        """
        resources = dict(resources) if resources is not None else {
            'VCPU': vcpus, 'MEMORY_MB': memory_mb}
        limits = prepared if prepared is not None else self.prepare(project_id)
        limits.counting.count = _memoized(self._server_usage(conn, project_id, group_uuid))
        conn.info[_CHECKED] = (project_id, limits, resources)
        first: quotas.QuotaExceeded | None = None
        count = max_count
        while True:
            try:
                self._enforce(limits, project_id, deltas_for(resources, count))
                break
            except quotas.QuotaExceeded as exc:
                first = first or exc
                if count <= min_count:
                    raise first from None
                count -= 1
        if group_uuid is not None:
            self._enforce(limits, project_id, {SERVER_GROUP_MEMBERS: count})
        return count

    def recheck_servers(self, conn: Connection, project_id: str, written: int,
                        group_uuid: str | None = None) -> None:
        """After writing, in the same transaction: is the project still within its limits?

        Counted again (deltas of 0, as Nova's recheck) against the limits
        the check read; a breach is ``QuotaExceeded`` and the caller's
        transaction, the write with it, is rolled back.
        """
        checked = conn.info.pop(_CHECKED, None)
        if checked is not None and checked[0] == project_id:
            _, limits, resources = checked
        else:
            limits, resources = self.prepare(project_id), {}
        limits.counting.count = _memoized(self._server_usage(conn, project_id, group_uuid))
        self._enforce(limits, project_id, dict.fromkeys(deltas_for(resources, 0), 0))
        if group_uuid is not None:
            self._enforce(limits, project_id, {SERVER_GROUP_MEMBERS: 0})

    def _server_usage(self, conn: Connection, project_id: str,
                      group_uuid: str | None) -> Callable:
        # The project is this create's: oslo.limit passes None for the
        # resources enforced against their registered limit.
        def usage(_scope, names):
            return usage_for(
                names, servers=lambda: instance_mappings.count_of_project(conn, project_id),
                placed=lambda: quotas.placement_usage(conn, self.placement, project_id),
                members=None if group_uuid is None else
                lambda: server_groups.member_count(conn, group_uuid))
        return usage

    def check(self, project_id: str, user_id: str | None, delta: int) -> None:
        """The server groups' quota (``GroupQuota``): room for ``delta`` more groups?

        ``server_groups.create`` asks with 1 before writing and 0 after;
        counted per project, under the project's limit (Nova's own check
        reads the registered limit only).
        """
        def usage(_scope, names):
            with self.api_engine.connect() as conn:
                return usage_for(names, servers=_zero, placed=dict,
                                 groups=lambda: server_groups.count_of_project(conn, project_id))
        limits = self.prepare(project_id)
        limits.counting.count = usage
        self._enforce(limits, project_id, {SERVER_GROUPS: delta})


class _Counting:
    """A create's usage callback: one Enforcer for the check and the recheck, counting anew for the recheck."""

    def __init__(self, count: Callable):
        self.count = count

    def __call__(self, project_id, names):
        return self.count(project_id, names)


class LimitsInKeystone(ValueError):
    """A change asked of limits that Keystone keeps (the CLI: one line, exit 2)."""

    exit_code = 2


# The check's limits, for the recheck of the same transaction (Connection.info).
_CHECKED = 'cellplane.unified_limits.checked'


def _zero() -> int:
    return 0


def _no_usage(project_id, names):
    raise AssertionError('nothing is enforced before the check sets what counts')


def _forget_cached_limits(enforcer) -> bool:
    """Empty an oslo.limit Enforcer's caches of limits; False if it keeps them where this cannot see.

    oslo.limit has no public way to read the limits anew with an Enforcer
    it has made (its caches live in its flat model's ``_utils``); when that
    changes, the caller makes a new Enforcer instead (correct, slower).
    """
    utils = getattr(getattr(enforcer, 'model', None), '_utils', None)
    caches = [getattr(utils, name, None) for name in ('rlimit_cache', 'plimit_cache')]
    if not all(isinstance(cache, dict) for cache in caches):
        return False
    for cache in caches:
        cache.clear()
    return True


def _memoized(callback: Callable) -> Callable:
    """The callback, counting once per resource name for one check (its retries with fewer)."""
    seen: dict[str, int] = {}

    def usage(project_id, names):
        missing = [n for n in names if n not in seen]
        if missing:
            seen.update(callback(project_id, missing))
        return {n: seen[n] for n in names}
    return usage


def _oslo_limit_enforcer(usage_callback: Callable):
    from oslo_limit import limit

    return limit.Enforcer(usage_callback)


def check_conf(conf: cfg.ConfigOpts) -> None:
    """``[quota] driver = unified_limits`` needs ``[oslo_limit]``: a ``ConfigError`` naming what is missing."""
    if conf is not cfg.CONF:
        raise config.ConfigError('[quota] driver = unified_limits: oslo.limit reads '
                                 '[oslo_limit] from the global configuration only')
    section = conf.oslo_limit
    if not section.auth_type:
        raise config.ConfigError('[quota] driver = unified_limits needs [oslo_limit] auth_type '
                                 '(and its keystoneauth options: auth_url, username, '
                                 'password, system_scope = all...)')
    if not (section.endpoint_id or section.endpoint_service_type
            or section.endpoint_service_name):
        raise config.ConfigError('[quota] driver = unified_limits needs [oslo_limit] '
                                 'endpoint_id, or endpoint_service_type (compute) with '
                                 'endpoint_region_name: the compute endpoint whose limits apply')


def from_conf(conf: cfg.ConfigOpts, api_engine: Engine, placement) -> UnifiedLimitsQuotas:
    check_conf(conf)
    return UnifiedLimitsQuotas(api_engine, placement,
                               strategy=conf.quota.unified_limits_resource_strategy,
                               listed=conf.quota.unified_limits_resource_list)
