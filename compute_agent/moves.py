"""A move's steps on one node: prepare and finish on the destination, hand over and take back on the source.

Each step works through the node's ``InstanceBuilder`` (its driver and its
local record of promised resources) and never raises for a failure that is
the move's: ``prepare`` and ``finish`` return the ``BuildAttempt`` the
destination reports (a failed one is rescheduled by the cell conductor,
as a failed build is). Placement is not touched here: the move's claims
are the scheduler's and the cell conductor's.

- ``prepare`` (destination): promise the new flavor's resources locally.
- ``hand_over`` (source): copy, then stop the instance; it stays here,
  stopped, until the move is confirmed (``InstanceBuilder.destroy``) or
  fails or is reverted (``take_back``). A live migration's abort during
  the copy (its ``CopyControl``) raises ``MoveAborted``: nothing stopped.
  A copy that fails (``CopyFailed``, or any driver error) is the move's
  failure: the instance runs on here and the reason goes to the conductor.
- ``finish`` (destination): spawn at the new flavor; on failure the
  promise is given back.
- ``take_back`` (source): run the instance again at its old flavor (one
  running here already, other than a same-host resize's, is left as it is).
- ``rebuild`` (an evacuation's destination): ``prepare`` and ``finish``
  at once, the source being down.
"""
from __future__ import annotations

import dataclasses
import datetime
import logging

from compute_agent.builder import InstanceBuilder
from compute_agent.local_claims import (
    InsufficientLocalResources,
    driver_capacity,
    requested_resources,
)
from compute_agent.virt.driver import (
    BuildFailed,
    BuildRequest,
    CopyControl,
    CopyFailed,
    MoveAborted,
)
from rpc_schemas.build_attempt import FAILED, OK, BuildAttempt
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.migration import Migration
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def _attempt(builder: InstanceBuilder, start: datetime.datetime,
             reason: str | None) -> BuildAttempt:
    return BuildAttempt(host=builder.host, nodename=builder.nodename, start=start,
                        finish=_now(), result=OK if reason is None else FAILED,
                        reason=reason)


def _capacity(builder: InstanceBuilder, selection: Selection) -> dict[str, int]:
    return dict(selection.limits) or driver_capacity(builder.driver.get_inventory())


def prepare(builder: InstanceBuilder, instance: Instance, migration: Migration,
            selection: Selection) -> BuildAttempt:
    """Destination: promise the new flavor's resources here; the attempt (failed: why)."""
    start = _now()
    moving = _at(instance, migration.new_flavor)
    try:
        builder.local_claims.claim(instance.uuid, requested_resources(moving, selection),
                                   _capacity(builder, selection))
    except InsufficientLocalResources as exc:
        return _attempt(builder, start, str(exc))
    return _attempt(builder, start, None)


def hand_over(builder: InstanceBuilder, instance_uuid: str,
              control: CopyControl | None = None) -> str | None:
    """Source: copy, then stop the instance for the move; None, or why it could not be.

    ``MoveAborted`` (from ``control``) is raised as it is: the instance runs on.
    """
    if instance_uuid not in builder.driver.list_instances():
        return f'instance {instance_uuid} is not on {builder.host}'
    try:
        builder.driver.hand_over(instance_uuid, control)
    except MoveAborted:
        raise
    except CopyFailed as exc:
        LOG.warning('The copy of instance %s failed on %s: %s', instance_uuid, builder.host,
                    exc.reason)
        return f'the copy failed on {builder.host}: {exc.reason}'
    except Exception as exc:  # a driver error fails the move, not the agent
        LOG.exception('Hand-over of instance %s failed on %s', instance_uuid, builder.host)
        return f'the hand-over failed on {builder.host}: {type(exc).__name__}: {exc}'
    return None


def finish(builder: InstanceBuilder, instance: Instance, migration: Migration,
           selection: Selection) -> BuildAttempt:
    """Destination: run the instance here at its new flavor; the attempt (failed: why)."""
    start = _now()
    flavor = migration.new_flavor
    try:
        builder.driver.spawn(BuildRequest(
            instance_uuid=instance.uuid, vcpus=flavor.vcpus, memory_mb=flavor.memory_mb,
            root_gb=flavor.root_gb, image_properties=dict(instance.image_properties)))
    except BuildFailed as exc:
        reason = exc.reason
    except Exception as exc:  # a driver error fails the move, not the agent
        LOG.exception('Move of instance %s failed unexpectedly in the driver on %s',
                      instance.uuid, builder.host)
        reason = f'unexpected error in the virt driver: {type(exc).__name__}: {exc}'
    else:
        return _attempt(builder, start, None)
    if builder.host == migration.source_host:
        # A same-host resize: the old size stays promised to the stopped instance.
        _promise_old(builder, instance, migration, selection)
    else:
        builder.local_claims.release(instance.uuid)
    return _attempt(builder, start, reason)


def rebuild(builder: InstanceBuilder, instance: Instance, migration: Migration,
            selection: Selection) -> BuildAttempt:
    """Evacuation destination: promise the resources here and spawn the instance; the attempt (failed: why)."""
    prepared = prepare(builder, instance, migration, selection)
    if prepared.result != OK:
        return prepared
    finished = finish(builder, instance, migration, selection)
    return dataclasses.replace(finished, start=prepared.start)


def take_back(builder: InstanceBuilder, instance: Instance, migration: Migration,
              selection: Selection | None = None, *, same_host: bool = False) -> str | None:
    """Source: run the instance again at its old flavor (the move failed or was reverted); None or why not.

    ``same_host``: the move was a resize on this host, so an instance
    running here runs at the new size; otherwise one running here never
    stopped (a failed copy) or was taken back already.
    """
    flavor = migration.old_flavor
    running = instance.uuid in builder.driver.running()
    if running and not same_host:
        # Taken back already (a revert done again by a resuming super conductor).
        _promise_old(builder, instance, migration, selection)
        return None
    try:
        if running:
            # A same-host resize ran it here at the new size: back to the old.
            builder.driver.spawn(BuildRequest(
                instance_uuid=instance.uuid, vcpus=flavor.vcpus,
                memory_mb=flavor.memory_mb, root_gb=flavor.root_gb,
                image_properties=dict(instance.image_properties)))
        else:
            builder.driver.power_on(instance.uuid)
    except BuildFailed as exc:
        return exc.reason
    _promise_old(builder, instance, migration, selection)
    return None


def _promise_old(builder: InstanceBuilder, instance: Instance, migration: Migration,
                 selection: Selection | None) -> None:
    resources = migration.old_flavor.placement_resources()
    capacity = (dict(selection.limits) if selection is not None and selection.limits
                else driver_capacity(builder.driver.get_inventory()))
    try:
        builder.local_claims.claim(instance.uuid, resources, capacity)
    except InsufficientLocalResources as exc:
        # It ran here at that size before the move: keep running it; say so.
        LOG.warning('Instance %s is back on %s at its old size, beyond what the local '
                    'record allows: %s', instance.uuid, builder.host, exc)


def _at(instance: Instance, flavor: Flavor) -> Instance:
    return dataclasses.replace(instance, flavor=flavor)
