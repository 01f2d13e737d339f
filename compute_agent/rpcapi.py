"""The compute agent's RPC client: what conductors import to reach an agent by host.

Every method is a cast to topic ``compute``, server = the agent's
``[DEFAULT] host``, on the CELL's message bus (the super conductor uses the
cell's transport from its cell mapping).

API versions:
    1.0 - (diagnostics ping only)
    1.1 - build_and_run_instance(instance: Instance, request_spec: RequestSpec,
              host_list: list[Selection]) cast. ``host_list[0]`` is the host
              the build runs on; its allocation is already claimed in
              Placement under the instance's UUID. ``host_list[1:]`` are
              unclaimed alternates in the same cell, best first, each with
              its own allocation request: the agent hands them to its cell
              conductor (``reschedule_build``) if the build fails.
          terminate_instance(instance_uuid: str) cast: destroy it, remove
              its allocations in Placement, report it DELETED.
    1.2 - terminate_instance(instance_uuid: str, host: str) cast: ``host``
              names the host, for an agent that serves several (a hollow
              agent); the agent of 1.1 finds it by the instance.
    1.3 - discard_instance(instance_uuid: str, host: str) cast: destroy it on
              ``host`` and nothing else: no Placement change, no report. For
              a build that finished on a host after the cell conductor moved
              it elsewhere (the allocation is then the new host's).
    1.4 - A cold migration or resize, host to host on the cell's bus (each
          with instance: Instance, request_spec: RequestSpec, migration:
          Migration and host_list: list[Selection], whose first is the
          destination, claimed for the instance, the rest its alternates):
          prep_move cast to the destination (the cell conductor): promise
              the new flavor's resources, then hand_over to the source;
          hand_over cast to the source (from the destination): stop the
              instance, then finish_move to the destination;
          finish_move cast to the destination (from the source): run it at
              the new flavor, report move_finished to the cell conductor;
              a failure on the destination is reschedule_move there.
          take_back(instance, migration, host) cast to the source: run the
              instance again at its old flavor (the move failed, or is
              reverted).
    1.5 - rebuild_instance(instance, request_spec, migration: Migration,
              host_list) cast to the destination of an evacuation (the cell
              conductor; host_list[0] claimed for the instance, the source
              allocation on the migration's consumer): promise the
              resources and spawn the instance here, without its source
              (it is down); report move_finished, or reschedule_move with
              the alternates left.
    1.6 - A live migration's copy on its source, cast by the API role (each
          with instance_uuid: str, migration_uuid: str, host: str, the
          migration's source):
          live_migration_abort: stop the copy (the instance runs on there,
              and the cell conductor hears move_aborted), or refuse it
              when it arrives if it has not begun; too late once it ended.
          live_migration_force_complete: end the copy now (the fake
              driver's simulated copy stops waiting); nothing if none runs.
    1.7 - Calls that ask a host what it holds (the cell conductor's stalled-move
          check, and the fault tests):
          guest_state(host: str, instance_uuid: str) -> str: ``moving`` (a
              step of a move of it is under way there), ``running``,
              ``stopped`` (handed over to a move) or ``absent``.
          guests(host: str) -> list[str]: the instances running on ``host``.
    1.8 - take_back(..., same_host: bool): the move taken back was a same-host
          resize, so an instance running on its source runs there at the new
          size and is run again at the old one; without it (1.4) an instance
          already running there is left as it is (a failed copy, a revert
          done twice).
"""
from __future__ import annotations

from typing import Sequence

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from rpc_schemas.instance import Instance
from rpc_schemas.migration import Migration
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection

TOPIC = 'compute'


class InvalidHostList(ValueError):
    """A build was asked with a host list that does not start with the target host."""


class DiscardNotSupported(RuntimeError):
    """The agents are capped below the API version that can discard an instance."""


class LiveMigrationControlNotSupported(RuntimeError):
    """The agents are capped below the API version that can abort or force a live migration."""


class ComputeAPI(RPCAPIClient):
    SERVICE = 'compute'
    TOPIC = TOPIC
    API_VERSION = '1.8'

    def build_and_run_instance(self, ctxt: RequestContext, host: str, instance: Instance,
                               request_spec: RequestSpec,
                               host_list: Sequence[Selection]) -> None:
        """Cast the build of ``instance`` to ``host`` (= ``host_list[0].service_host``).

        ``host_list[0]`` must already be claimed in Placement for
        ``instance.uuid``; the rest are the unclaimed alternates.
        """
        host_list = list(host_list)
        if not host_list or host_list[0].service_host != host:
            first = host_list[0].service_host if host_list else 'nothing'
            raise InvalidHostList(
                f'build_and_run_instance of {instance.uuid} to {host}: host_list '
                f'must start with the Selection of {host} (the claimed host), '
                f'it starts with {first}')
        self.prepare('build_and_run_instance', '1.1', server=host).cast(
            ctxt, 'build_and_run_instance', instance=instance,
            request_spec=request_spec, host_list=host_list)

    def terminate_instance(self, ctxt: RequestContext, host: str,
                           instance_uuid: str) -> None:
        """Cast: destroy ``instance_uuid`` on ``host`` and free its Placement allocations."""
        if self.can_send_version('1.2'):
            self.prepare('terminate_instance', '1.2', server=host).cast(
                ctxt, 'terminate_instance', instance_uuid=instance_uuid, host=host)
            return
        self.prepare('terminate_instance', '1.1', server=host).cast(
            ctxt, 'terminate_instance', instance_uuid=instance_uuid)

    def discard_instance(self, ctxt: RequestContext, host: str, instance_uuid: str) -> None:
        """Cast: destroy ``instance_uuid`` on ``host`` only (its allocation is another host's)."""
        if not self.can_send_version('1.3'):
            raise DiscardNotSupported(
                f'discard_instance of {instance_uuid} on {host} needs compute API 1.3; '
                f'[upgrade_levels] compute caps it at {self.version_cap}')
        self.prepare('discard_instance', '1.3', server=host).cast(
            ctxt, 'discard_instance', instance_uuid=instance_uuid, host=host)

    def prep_move(self, ctxt: RequestContext, instance: Instance, request_spec: RequestSpec,
                  migration: Migration, host_list: Sequence[Selection]) -> None:
        """Cast to the destination (``host_list[0]``): prepare the move, then hand it to the source."""
        host = host_list[0].service_host
        self.prepare('prep_move', '1.4', server=host).cast(
            ctxt, 'prep_move', instance=instance, request_spec=request_spec,
            migration=migration, host_list=list(host_list))

    def hand_over(self, ctxt: RequestContext, instance: Instance, request_spec: RequestSpec,
                  migration: Migration, host_list: Sequence[Selection]) -> None:
        """Cast to the source: stop the instance, then let the destination finish."""
        self.prepare('hand_over', '1.4', server=migration.source_host).cast(
            ctxt, 'hand_over', instance=instance, request_spec=request_spec,
            migration=migration, host_list=list(host_list))

    def finish_move(self, ctxt: RequestContext, instance: Instance,
                    request_spec: RequestSpec, migration: Migration,
                    host_list: Sequence[Selection]) -> None:
        """Cast to the destination (``host_list[0]``): run the instance at its new flavor."""
        host = host_list[0].service_host
        self.prepare('finish_move', '1.4', server=host).cast(
            ctxt, 'finish_move', instance=instance, request_spec=request_spec,
            migration=migration, host_list=list(host_list))

    def take_back(self, ctxt: RequestContext, instance: Instance,
                  migration: Migration, *, same_host: bool = False) -> None:
        """Cast to the source: run the instance again at its old flavor.

        ``same_host``: the move was a resize on its own host (API 1.8; an
        agent capped below is sent 1.4, which leaves a running instance as
        it is).
        """
        kwargs = dict(instance=instance, migration=migration, host=migration.source_host)
        version = '1.4'
        if self.can_send_version('1.8'):
            version, kwargs['same_host'] = '1.8', same_host
        self.prepare('take_back', version, server=migration.source_host).cast(
            ctxt, 'take_back', **kwargs)

    def rebuild_instance(self, ctxt: RequestContext, instance: Instance,
                         request_spec: RequestSpec, migration: Migration,
                         host_list: Sequence[Selection]) -> None:
        """Cast to an evacuation's destination (``host_list[0]``): rebuild the instance there (API 1.5)."""
        host = host_list[0].service_host
        self.prepare('rebuild_instance', '1.5', server=host).cast(
            ctxt, 'rebuild_instance', instance=instance, request_spec=request_spec,
            migration=migration, host_list=list(host_list))
    def _copy_cast(self, ctxt: RequestContext, method: str, host: str, instance_uuid: str,
                   migration_uuid: str) -> None:
        if not self.can_send_version('1.6'):
            raise LiveMigrationControlNotSupported(
                f'{method} of migration {migration_uuid} needs compute API 1.6; '
                f'[upgrade_levels] compute caps it at {self.version_cap}')
        self.prepare(method, '1.6', server=host).cast(
            ctxt, method, instance_uuid=instance_uuid, migration_uuid=migration_uuid,
            host=host)

    def live_migration_abort(self, ctxt: RequestContext, host: str, instance_uuid: str,
                             migration_uuid: str) -> None:
        """Cast to the source (API 1.6): stop the live migration's copy, or refuse it if not begun."""
        self._copy_cast(ctxt, 'live_migration_abort', host, instance_uuid, migration_uuid)

    def live_migration_force_complete(self, ctxt: RequestContext, host: str,
                                      instance_uuid: str, migration_uuid: str) -> None:
        """Cast to the source (API 1.6): end the live migration's copy now."""
        self._copy_cast(ctxt, 'live_migration_force_complete', host, instance_uuid,
                        migration_uuid)

    def guest_state(self, ctxt: RequestContext, host: str, instance_uuid: str, *,
                    timeout: float | None = None) -> str:
        """Call: what ``host`` holds of ``instance_uuid`` (moving, running, stopped, absent).

        Raises ``oslo_messaging.MessagingTimeout`` when the host does not answer.
        """
        return self.prepare('guest_state', '1.7', server=host, timeout=timeout).call(
            ctxt, 'guest_state', host=host, instance_uuid=instance_uuid)

    def guests(self, ctxt: RequestContext, host: str, *,
               timeout: float | None = None) -> list[str]:
        """Call: the instances running on ``host``."""
        return self.prepare('guests', '1.7', server=host, timeout=timeout).call(
            ctxt, 'guests', host=host)
