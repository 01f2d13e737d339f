"""The super conductor's RPC client: what the API role imports to hand it a boot.

Served by the super conductor (``conductor/super/manager.py``) on topic
``conductor`` of the top-level bus, in RPC namespace ``super_conductor``.

API versions (the number continues the history of the conductor API this
method was part of until both conductors shared one; from now on this API
and the cell conductor's evolve apart):
    1.2 - schedule_and_build_instances(request_spec: RequestSpec,
              instance_uuids: list[str]) cast: the API role has written a
              build request per instance; schedule them all and cast each
              build to its cell.
    1.3 - migrate_server(cell_uuid: str, migration_uuid: str) cast: the API
              role recorded a queued migration (a cold migration or a
              resize) in that cell; ask the scheduler for its destination
              and hand it to the cell's conductor.
          confirm_resize(cell_uuid: str, migration_uuid: str) cast and
          revert_resize(cell_uuid: str, migration_uuid: str) cast: end a
              finished move: drop the source allocation, or move back.
    1.4 - evacuate_server(cell_uuid: str, migration_uuid: str) cast: the API
              role recorded a queued evacuation (the instance's host is
              down) in that cell; ask the scheduler for its destination and
              hand it to the cell's conductor (``evacuate_instance``, cell
              conductor API 1.7), which rebuilds it there. A client capped
              below 1.4 refuses to send it (``EvacuateNotSupported``): a
              super conductor before 1.4 would drive it as a cold migration,
              which waits for the dead source.

``[upgrade_levels] super_conductor`` caps what this client sends.
"""
from __future__ import annotations

from typing import Sequence

from cellplane.context import RequestContext
from cellplane.rpc.client import RPCAPIClient
from rpc_schemas.request_spec import RequestSpec

TOPIC = 'conductor'
NAMESPACE = 'super_conductor'
API_VERSION = '1.4'


class EvacuateNotSupported(RuntimeError):
    """``[upgrade_levels] super_conductor`` caps this client below 1.4 (evacuate_server)."""


class SuperConductorAPI(RPCAPIClient):
    SERVICE = 'super_conductor'
    TOPIC = TOPIC
    NAMESPACE = NAMESPACE
    API_VERSION = API_VERSION

    def schedule_and_build_instances(self, ctxt: RequestContext,
                                     request_spec: RequestSpec,
                                     instance_uuids: Sequence[str]) -> None:
        """Cast to the super conductor: schedule the build requests of ``instance_uuids``."""
        self.prepare('schedule_and_build_instances', '1.2').cast(
            ctxt, 'schedule_and_build_instances', request_spec=request_spec,
            instance_uuids=list(instance_uuids))

    def _move_cast(self, ctxt: RequestContext, method: str, cell_uuid: str,
                   migration_uuid: str) -> None:
        self.prepare(method, '1.3').cast(ctxt, method, cell_uuid=cell_uuid,
                                         migration_uuid=migration_uuid)

    def migrate_server(self, ctxt: RequestContext, cell_uuid: str,
                       migration_uuid: str) -> None:
        """Cast: schedule the queued migration ``migration_uuid`` of cell ``cell_uuid`` (API 1.3)."""
        self._move_cast(ctxt, 'migrate_server', cell_uuid, migration_uuid)

    def confirm_resize(self, ctxt: RequestContext, cell_uuid: str,
                       migration_uuid: str) -> None:
        """Cast: confirm the finished move (its source allocation dropped) (API 1.3)."""
        self._move_cast(ctxt, 'confirm_resize', cell_uuid, migration_uuid)

    def revert_resize(self, ctxt: RequestContext, cell_uuid: str,
                      migration_uuid: str) -> None:
        """Cast: revert the finished move (back on its source) (API 1.3)."""
        self._move_cast(ctxt, 'revert_resize', cell_uuid, migration_uuid)

    def evacuate_server(self, ctxt: RequestContext, cell_uuid: str,
                        migration_uuid: str) -> None:
        """Cast: schedule the queued evacuation ``migration_uuid`` of cell ``cell_uuid`` (API 1.4)."""
        if not self.can_send_version('1.4'):
            raise EvacuateNotSupported(
                f'evacuate_server needs super conductor API 1.4; [upgrade_levels] '
                f'super_conductor caps it at {self.version_cap}')
        self.prepare('evacuate_server', '1.4').cast(ctxt, 'evacuate_server',
                                                    cell_uuid=cell_uuid,
                                                    migration_uuid=migration_uuid)
