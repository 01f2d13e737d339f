"""The cell conductor's RPC client: what a cell's compute agents import to talk to their conductor.

Served by the cell conductor (``conductor/cell/manager.py``) on topic
``conductor`` of its cell's bus, in RPC namespace ``cell_conductor``. Only
the services of that cell reach it; nothing above the cell does.

API versions (the numbers continue the history of the conductor API these
methods were part of until both conductors shared one; from now on this API
and the super conductor's evolve apart):
    1.0 - service_heartbeat(status: ServiceStatus) cast
    1.1 - build_instances(instance: Instance, request_spec: RequestSpec,
              host_list: list[Selection], attempt: BuildAttempt) cast:
              the reschedule. ``attempt`` is the build that just failed (on
              the host whose allocation the cell conductor now removes);
              ``host_list`` is what is left of the alternates, unclaimed.
          instance_update(update: InstanceUpdate) cast: a state a compute
              agent reached (ACTIVE, ERROR, DELETED), with the build attempt
              behind it, recorded as an action event.
          compute_node_update(node: ComputeNodeRecord) cast: upsert the
              node's row in the cell DB's compute_nodes.
    1.2 - service_heartbeats(statuses: list[ServiceStatus]) cast and
          compute_node_updates(nodes: list[ComputeNodeRecord]) cast: the
              same as the 1.0/1.1 casts for many hosts in one message and
              one statement (a hollow agent's hosts).
          remove_compute_hosts(hosts: list[str]) cast: delete the compute
              node and compute service rows of hosts an agent no longer
              runs (it has already removed their unused providers).
    1.3 - service_heartbeat(s) carry ServiceStatus 1.1: a compute host's
              status lists the builds it holds (``building``), which the
              cell conductor marks started. Below 1.3 the client sends
              ServiceStatus 1.0, without that list.
    1.4 - build_started(instance_uuid: str, host: str) cast: the host began
              building the instance; the cell conductor sets its task_state
              to spawning and marks its build plan started, if the build in
              flight is cast to that host. Below 1.4 nothing is sent (the
              instance stays scheduling until it ends; the heartbeats still
              mark the plan started).
    1.5 - reschedule_build(instance, request_spec, host_list, attempt) cast:
              the reschedule of 1.1 under its own name (``build_instances``
              named what the super conductor does, not what this one does).
              Below 1.5 the client sends it as ``build_instances``, which the
              cell conductor still serves for one release.
    1.6 - A cold migration or resize, driven by the cell conductor:
          move_instance(instance, request_spec, migration: Migration,
              host_list) cast by the super conductor: the scheduler claimed
              host_list[0] (the migration's consumer holds the source
              allocation); prepare the move there.
          reschedule_move(instance, request_spec, migration, host_list,
              attempt) cast by a destination whose part failed: move the
              source allocation back, claim the next of host_list (what is
              left of the alternates), or end the migration in error.
          move_started(migration_uuid: str, dest_host: str) cast by the
              source as it hands the instance over: the migration is
              migrating.
          move_finished(migration_uuid: str, instance_uuid: str, host: str,
              node: str) cast by the destination: it runs the instance.
    1.7 - An evacuation (the instance's host is down):
          evacuate_instance(instance, request_spec, migration: Migration,
              host_list) cast by the super conductor: the scheduler claimed
              host_list[0] (the migration's consumer holds the dead source's
              allocation); rebuild the instance there (compute API 1.5
              ``rebuild_instance``; a failure there comes back as
              ``reschedule_move``, a success as ``move_finished``).
          evacuated_guests(guests: dict[str, list[str]]) call by a compute
              agent whose hosts start with guests on them (host -> the
              instance uuids its driver holds); answers, for each evacuation
              from those hosts that awaits its source's cleanup, a dict
              {"host", "instance_uuid", "migration_uuid", "destroy"}:
              ``destroy`` is true when the host holds that guest and it
              belongs to another host now (it must be destroyed before the
              host reports). Computes hold no database credentials: this
              is how a returning host learns what it no longer owns.
          evacuations_cleaned(host: str, migration_uuids: list[str]) cast by
              that agent once it destroyed those guests and freed the
              migrations' allocations in Placement: the migrations go from
              ``done`` to ``completed``.
          A client capped below 1.7 refuses evacuate_instance
          (``EvacuateNotSupported``); an agent capped below 1.7 does not ask
              (it keeps its guests; the operator destroys them by hand).
    1.8 - move_aborted(migration_uuid: str, instance_uuid: str, host: str)
              cast by a live migration's source (``host``) that stopped the
              copy for an abort, or refused a copy aborted before it began:
              the instance still runs there. The migration is cancelled,
              the destination's claim dropped and the source allocation
              moved back to the instance.

    1.9 - move_instance and evacuate_instance carry ``taken_at`` (ISO 8601,
              naive UTC): the ``updated_at`` the super conductor's take of
              the migration wrote. The cell conductor starts the move only
              if the migration is unchanged since (a compare-and-set in the
              cell database), which tells a hand-over of a move resumed as
              lost (or cancelled) since from the current one without asking
              Placement. Below 1.9 (or without it) it asks Placement whether
              the instance holds the destination, as before.
    1.10 - host_heartbeats(status: ServiceStatus, hosts: list[str],
              building: dict[str, list[str]]) cast: the heartbeat of many
              hosts of one agent (a hollow agent's), which share everything
              but their names: ``status`` once (its ``host`` is the
              sender's, written only if it is one of ``hosts``), the names,
              and the builds each host holds (hosts holding none left out).
              One message and one UPDATE for them all; the conductor checks
              one payload, not one per host (500 ``ServiceStatus`` every
              ``report_interval`` were most of a hollow agent's and its
              conductor's CPU at rest). Below 1.10 the client sends one
              status per host (``service_heartbeats``, 1.2 or 1.3).

``[upgrade_levels] cell_conductor`` caps what this client sends.
"""
from __future__ import annotations

import dataclasses
import datetime
from typing import Sequence

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from cellplane.rpc.serializer import PinnedPayload
from rpc_schemas.build_attempt import BuildAttempt
from rpc_schemas.compute_node import ComputeNodeRecord
from rpc_schemas.instance import Instance
from rpc_schemas.instance_update import InstanceUpdate
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from rpc_schemas.service_status import ServiceStatus

TOPIC = 'conductor'
NAMESPACE = 'cell_conductor'
API_VERSION = '1.10'


class EvacuateNotSupported(RuntimeError):
    """``[upgrade_levels] cell_conductor`` caps this client below 1.7 (evacuations)."""


class CellConductorAPI(RPCAPIClient):
    SERVICE = 'cell_conductor'
    TOPIC = TOPIC
    NAMESPACE = NAMESPACE
    API_VERSION = API_VERSION

    def service_heartbeat(self, ctxt: RequestContext, status: ServiceStatus) -> None:
        """Cast a heartbeat to the cell conductor, which records it in the cell DB."""
        version = self.pick_version('service_heartbeat', '1.0', '1.3')
        self.prepare('service_heartbeat', version).cast(
            ctxt, 'service_heartbeat', status=self.status_for(version, status))

    def service_heartbeats(self, ctxt: RequestContext,
                           statuses: Sequence[ServiceStatus]) -> None:
        """Heartbeats of several hosts in one cast (one per host below API 1.2)."""
        if self.can_send_version('1.2'):
            version = self.pick_version('service_heartbeats', '1.2', '1.3')
            self.prepare('service_heartbeats', version).cast(
                ctxt, 'service_heartbeats',
                statuses=[self.status_for(version, s) for s in statuses])
            return
        for status in statuses:
            self.service_heartbeat(ctxt, status)

    def host_heartbeats(self, ctxt: RequestContext, status: ServiceStatus,
                        hosts: Sequence[str], building: dict[str, list[str]], *,
                        batch: int = 250) -> None:
        """One heartbeat of ``hosts``, which share ``status`` but for their names (API 1.10).

        ``building``: host -> the builds it holds (a host not in it holds
        none). Below API 1.10: one ``ServiceStatus`` per host, ``batch`` to
        a message (``service_heartbeats``).
        """
        if self.can_send_version('1.10'):
            self.prepare('host_heartbeats', '1.10').cast(
                ctxt, 'host_heartbeats', status=dataclasses.replace(status, building=None),
                hosts=list(hosts), building={h: list(b) for h, b in building.items() if b})
            return
        statuses = [dataclasses.replace(status, host=h, building=list(building.get(h, ())))
                    for h in hosts]
        for start in range(0, len(statuses), batch):
            self.service_heartbeats(ctxt, statuses[start:start + batch])

    @staticmethod
    def status_for(version: str, status: ServiceStatus):
        """``status`` as a conductor of API ``version`` reads it (1.0 below API 1.3)."""
        if version == '1.3':
            return status
        # A conductor not yet upgraded refuses ServiceStatus 1.1; the list
        # of builds is only a hint, so it is dropped rather than the heartbeat.
        return PinnedPayload(dataclasses.replace(status, building=None), '1.0')

    def remove_compute_hosts(self, ctxt: RequestContext, hosts: Sequence[str]) -> None:
        """Cast: forget the compute nodes and compute services of ``hosts`` (API 1.2)."""
        self.prepare('remove_compute_hosts', '1.2').cast(
            ctxt, 'remove_compute_hosts', hosts=list(hosts))

    def reschedule_build(self, ctxt: RequestContext, instance: Instance,
                         request_spec: RequestSpec, host_list: Sequence[Selection],
                         attempt: BuildAttempt) -> None:
        """Cast a reschedule to the cell conductor: the build in ``attempt`` failed.

        Named ``build_instances`` (API 1.1) to a cell conductor capped below 1.5.
        """
        args = dict(instance=instance, request_spec=request_spec,
                    host_list=list(host_list), attempt=attempt)
        if self.can_send_version('1.5'):
            self.prepare('reschedule_build', '1.5').cast(ctxt, 'reschedule_build', **args)
            return
        # A cell conductor before 1.4 knows the reschedule only by its old name
        # (served by newer ones for one release; then this branch goes).
        self.prepare('build_instances', '1.1').cast(ctxt, 'build_instances', **args)

    def build_started(self, ctxt: RequestContext, instance_uuid: str, host: str) -> None:
        """Cast: ``host`` began building the instance (API 1.4; nothing below it)."""
        if self.can_send_version('1.4'):
            self.prepare('build_started', '1.4').cast(
                ctxt, 'build_started', instance_uuid=instance_uuid, host=host)

    def instance_update(self, ctxt: RequestContext, update: InstanceUpdate) -> None:
        """Cast a state change of one instance to the cell conductor."""
        self.prepare('instance_update', '1.1').cast(ctxt, 'instance_update',
                                                    update=update)

    def compute_node_update(self, ctxt: RequestContext, node: ComputeNodeRecord) -> None:
        """Cast a compute node's record to the cell conductor, which upserts it."""
        self.prepare('compute_node_update', '1.1').cast(ctxt, 'compute_node_update',
                                                        node=node)

    def compute_node_updates(self, ctxt: RequestContext,
                             nodes: Sequence[ComputeNodeRecord]) -> None:
        """Records of several nodes in one cast (one per node below API 1.2)."""
        if self.can_send_version('1.2'):
            self.prepare('compute_node_updates', '1.2').cast(
                ctxt, 'compute_node_updates', nodes=list(nodes))
            return
        for node in nodes:
            self.compute_node_update(ctxt, node)

    def move_instance(self, ctxt: RequestContext, instance: Instance,
                      request_spec: RequestSpec, migration: Migration,
                      host_list: Sequence[Selection], *,
                      taken_at: datetime.datetime | None = None) -> None:
        """Cast (API 1.6; 1.9 with ``taken_at``): drive the move of ``instance`` to ``host_list[0]`` (claimed)."""
        self._hand_over('move_instance', '1.6', ctxt, taken_at, instance=instance,
                        request_spec=request_spec, migration=migration,
                        host_list=list(host_list))

    def _hand_over(self, method: str, version: str, ctxt: RequestContext,
                   taken_at: datetime.datetime | None, **kwargs) -> None:
        if taken_at is not None and self.can_send_version('1.9'):
            version, kwargs['taken_at'] = '1.9', taken_at.isoformat()
        self.prepare(method, version).cast(ctxt, method, **kwargs)

    def reschedule_move(self, ctxt: RequestContext, instance: Instance,
                        request_spec: RequestSpec, migration: Migration,
                        host_list: Sequence[Selection], attempt: BuildAttempt) -> None:
        """Cast (API 1.6): the move's destination failed (``attempt``); try the next of ``host_list``."""
        self.prepare('reschedule_move', '1.6').cast(
            ctxt, 'reschedule_move', instance=instance, request_spec=request_spec,
            migration=migration, host_list=list(host_list), attempt=attempt)

    def move_started(self, ctxt: RequestContext, migration_uuid: str,
                     dest_host: str) -> None:
        """Cast (API 1.6): the source hands the instance over to ``dest_host``."""
        self.prepare('move_started', '1.6').cast(
            ctxt, 'move_started', migration_uuid=migration_uuid, dest_host=dest_host)

    def move_finished(self, ctxt: RequestContext, migration_uuid: str,
                      instance_uuid: str, host: str, node: str) -> None:
        """Cast (API 1.6): the destination runs the instance at its new flavor."""
        self.prepare('move_finished', '1.6').cast(
            ctxt, 'move_finished', migration_uuid=migration_uuid,
            instance_uuid=instance_uuid, host=host, node=node)

    def evacuate_instance(self, ctxt: RequestContext, instance: Instance,
                          request_spec: RequestSpec, migration: Migration,
                          host_list: Sequence[Selection], *,
                          taken_at: datetime.datetime | None = None) -> None:
        """Cast (API 1.7; 1.9 with ``taken_at``): rebuild ``instance`` (its host down) on ``host_list[0]``."""
        if not self.can_send_version('1.7'):
            raise EvacuateNotSupported(
                f'evacuate_instance needs cell conductor API 1.7; [upgrade_levels] '
                f'cell_conductor caps it at {self.version_cap}')
        self._hand_over('evacuate_instance', '1.7', ctxt, taken_at, instance=instance,
                        request_spec=request_spec, migration=migration,
                        host_list=list(host_list))

    def can_clean_evacuations(self) -> bool:
        """Whether this client may ask which guests were evacuated (API 1.7)."""
        return self.can_send_version('1.7')

    def evacuated_guests(self, ctxt: RequestContext, guests: dict[str, list[str]], *,
                         timeout: float | None = None) -> list[dict]:
        """Call (API 1.7): the evacuations from these hosts awaiting cleanup, and which guests to destroy."""
        return self.prepare('evacuated_guests', '1.7', timeout=timeout).call(
            ctxt, 'evacuated_guests', guests={h: list(u) for h, u in guests.items()})

    def evacuations_cleaned(self, ctxt: RequestContext, host: str,
                            migration_uuids: Sequence[str]) -> None:
        """Cast (API 1.7): ``host`` destroyed its evacuated guests and freed their migrations' allocations."""
        self.prepare('evacuations_cleaned', '1.7').cast(
            ctxt, 'evacuations_cleaned', host=host, migration_uuids=list(migration_uuids))
    def move_aborted(self, ctxt: RequestContext, migration_uuid: str, instance_uuid: str,
                     host: str) -> None:
        """Cast (API 1.8): the source stopped (or never began) the live migration's copy."""
        self.prepare('move_aborted', '1.8').cast(
            ctxt, 'move_aborted', migration_uuid=migration_uuid, instance_uuid=instance_uuid,
            host=host)
