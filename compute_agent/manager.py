"""The compute agent's RPC endpoint (API 1.1): build an instance here, or terminate one.

``build_and_run_instance``: build through ``InstanceBuilder`` (local
resource check, then the driver). Success: the cell conductor hears the
instance is ACTIVE on this host and node, with the attempt. Failure: the
cell conductor gets ``build_instances`` with the attempt and the
alternates left (``host_list[1:]``); it removes this host's allocation and
tries the next one. The agent itself never unclaims a build: the claim was
made for this host by someone else, and the conductor that reschedules owns
the unclaim.

``terminate_instance``: destroy through the driver, remove the instance's
allocations from Placement, report it DELETED.

Handlers log and return on a bad message (the sender cast and is gone).
"""
from __future__ import annotations

import datetime
import logging

from cellplane import rpc  # noqa: F401 - filters the eventlet warning first
from compute_agent.builder import InstanceBuilder
from conductor.cell.rpcapi import CellConductorAPI
import oslo_messaging as messaging  # noqa: E402,I100
from placement.client import PlacementClient, PlacementClientError, PlacementUnreachable
from rpc_schemas.build_attempt import FAILED, OK, BuildAttempt
from rpc_schemas.instance import ACTIVE, DELETED, Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

LOG = logging.getLogger(__name__)


def _check_build(instance, request_spec, host_list) -> str | None:
    """What is wrong with build_and_run_instance's arguments, or None."""
    for name, value, cls in (('instance', instance, Instance),
                             ('request_spec', request_spec, RequestSpec)):
        if not isinstance(value, cls):
            return f'{name} must be a {cls.NAME} payload, got {type(value).__name__}'
    if (not isinstance(host_list, list) or not host_list
            or not all(isinstance(s, Selection) for s in host_list)):
        return 'host_list must be a non-empty list of Selection payloads'
    return None


class ComputeManager:
    target = messaging.Target(version='1.1')

    def __init__(self, *, builder: InstanceBuilder, placement: PlacementClient,
                 conductor: CellConductorAPI) -> None:
        self.builder = builder
        self.placement = placement
        self.conductor = conductor

    @property
    def host(self) -> str:
        return self.builder.host

    def build_and_run_instance(self, ctxt, instance: Instance, request_spec: RequestSpec,
                               host_list: list[Selection]) -> None:
        problem = _check_build(instance, request_spec, host_list)
        if problem:
            LOG.error('Rejected build_and_run_instance: %s', problem)
            return
        selection = host_list[0]
        if selection.service_host != self.host:
            now = datetime.datetime.now(datetime.timezone.utc)
            attempt = BuildAttempt(
                host=self.host, nodename=self.builder.nodename, start=now, finish=now,
                result=FAILED, reason=(f'build sent to {self.host} but its host list '
                                       f'starts with {selection.service_host}'))
        else:
            LOG.info('Building instance %s', instance.uuid)
            attempt = self.builder.build(instance, selection)
        if attempt.result == OK:
            LOG.info('Instance %s built on %s', instance.uuid, self.host)
            self.conductor.instance_update(ctxt, InstanceUpdate(
                instance_uuid=instance.uuid, vm_state=ACTIVE, host=self.host,
                node=attempt.nodename, launched_at=attempt.finish, attempt=attempt))
            return
        LOG.warning('Build of instance %s failed: %s; handing %d alternate(s) to the '
                    'cell conductor', instance.uuid, attempt.reason, len(host_list) - 1)
        self.conductor.build_instances(ctxt, instance, request_spec, host_list[1:], attempt)

    def terminate_instance(self, ctxt, instance_uuid: str) -> None:
        if not isinstance(instance_uuid, str) or not instance_uuid:
            LOG.error('Rejected terminate_instance: instance_uuid must be a string, got %r',
                      instance_uuid)
            return
        self.builder.destroy(instance_uuid)
        try:
            self.placement.unclaim(instance_uuid)
        except (PlacementUnreachable, PlacementClientError) as exc:
            # The instance is gone from this host either way; the operator
            # must remove what Placement still holds for it.
            LOG.error('Instance %s destroyed, but its allocations could not be removed '
                      'from Placement (%s): remove them with DELETE /allocations/%s',
                      instance_uuid, exc, instance_uuid)
        self.conductor.instance_update(ctxt, InstanceUpdate(
            instance_uuid=instance_uuid, vm_state=DELETED, host=self.host))
        LOG.info('Instance %s terminated', instance_uuid)
