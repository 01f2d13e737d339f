"""One build on this host: the local resource check, the driver's spawn, and its outcome.

``InstanceBuilder.build`` never raises for a failed build: it returns the
``BuildAttempt`` (result, reason, start, finish) that the agent sends to its
cell conductor, which records it and, if it failed, reschedules. It also
counts consecutive failed builds, reported as the ``failed_builds`` stat
the scheduler's BuildFailureWeigher reads (reset by a successful build).

A second build of an instance this node is building, or runs, is not a
build: ``build`` returns None and changes nothing (a cast delivered twice,
or repeated by a conductor that took the first for lost, must not build
twice nor be reported as a failure).
"""
from __future__ import annotations

import datetime
import logging
import threading
from typing import Callable

from compute_agent.local_claims import (
    InsufficientLocalResources,
    LocalClaims,
    driver_capacity,
    requested_resources,
)
from compute_agent.virt.driver import BuildFailed, BuildRequest, VirtDriver
from rpc_schemas.build_attempt import FAILED, OK, BuildAttempt
from rpc_schemas.instance import Instance
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


class InstanceBuilder:
    """Builds and destroys instances on one node through its virt driver."""

    def __init__(self, *, host: str, nodename: str, driver: VirtDriver,
                 local_claims: LocalClaims | None = None) -> None:
        self.host = host
        self.nodename = nodename
        self.driver = driver
        self.local_claims = local_claims or LocalClaims()
        self._lock = threading.Lock()
        self._failed_builds = 0
        self._building: set[str] = set()

    @property
    def failed_builds(self) -> int:
        """Builds failed here since the last one that succeeded."""
        with self._lock:
            return self._failed_builds

    def building(self) -> list[str]:
        """The instances whose build is under way here (what the heartbeat says it holds)."""
        with self._lock:
            return sorted(self._building)

    def build(self, instance: Instance, selection: Selection,
              started: Callable[[], None] | None = None) -> BuildAttempt | None:
        """The outcome of building ``instance`` here; None if it is being built or runs here already.

        ``started`` is called once the build is taken on, before the driver
        spawns (the agent tells its conductor: task_state spawning).
        """
        with self._lock:
            if (instance.uuid in self._building
                    or instance.uuid in self.driver.list_instances()):
                return None
            self._building.add(instance.uuid)
        try:
            if started is not None:
                started()
            return self._attempt(instance, selection)
        finally:
            with self._lock:
                self._building.discard(instance.uuid)

    def _attempt(self, instance: Instance, selection: Selection) -> BuildAttempt:
        start = _now()
        try:
            self._build(instance, selection)
        except (BuildFailed, InsufficientLocalResources) as exc:
            reason = exc.reason if isinstance(exc, BuildFailed) else str(exc)
        except Exception as exc:  # a driver bug is a failed build, not a lost one
            LOG.exception('Build of instance %s failed unexpectedly in the driver',
                          instance.uuid)
            reason = f'unexpected error in the virt driver: {type(exc).__name__}: {exc}'
        else:
            reason = None
        if reason is not None:
            self.local_claims.release(instance.uuid)
        with self._lock:
            self._failed_builds = 0 if reason is None else self._failed_builds + 1
        return BuildAttempt(host=self.host, nodename=self.nodename, start=start,
                            finish=_now(), result=OK if reason is None else FAILED,
                            reason=reason)

    def _build(self, instance: Instance, selection: Selection) -> None:
        capacity = dict(selection.limits) or driver_capacity(self.driver.get_inventory())
        self.local_claims.claim(instance.uuid, requested_resources(instance, selection),
                                capacity)
        flavor = instance.flavor
        self.driver.spawn(BuildRequest(
            instance_uuid=instance.uuid, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, image_properties=dict(instance.image_properties)))

    def destroy(self, instance_uuid: str) -> None:
        """Remove the instance from the driver and its promise from the local record."""
        self.driver.destroy(instance_uuid)
        self.local_claims.release(instance_uuid)
