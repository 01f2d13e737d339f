"""``/servers/{server_id}/migrations``: a server's live migrations in progress, as Nova answers them.

``GET .../migrations`` (2.23) lists the server's live migrations not over
(queued, pre-migrating, migrating) and ``GET .../migrations/{id}`` (2.23)
shows one of them by its id: 404 if the server has no migration with that
id, if it is not a live migration, or if it is over, each with Nova's
message. Below its version a route is 404, as Nova answers a method it
does not have at the version asked. The server is looked up first (another
project's is 404), then the rule (``os_compute_api:servers:migrations:*``,
admin by default) is asked with the server's project as target, as Nova
does. Documents: ``cellplane_api.views.migrations.server_migration``.

``DELETE .../migrations/{id}`` (2.24) aborts the live migration (202):
while its source copies it (``migrating``, Nova's ``running``), and from
2.65 also ``queued`` or ``pre-migrating`` (Nova's ``preparing``); another
status is 400, a server not live migrating 409, an unknown id 404.
``POST .../migrations/{id}/action`` with ``{"force_complete": null}``
(2.22) asks the source to end the copy now (202): the fake driver stops
its simulated wait, and the switch-over follows as usual; a migration not
``migrating`` or an unknown id is 400, a server not live migrating 409.
Both are ``cellplane_api.moves``', which the CLI calls too.
"""
from __future__ import annotations

from cellplane.objects import migrations
from cellplane_api import errors, moves, servers
from cellplane_api.handlers.servers import server_of_url
from cellplane_api.policies import migrations as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import server_migrations as schemas
from cellplane_api.schemas import validate
from cellplane_api.views import migrations as views


def _since(req, version: tuple[int, int]) -> None:
    if req.mv < version:
        raise errors.NotFound('The resource could not be found.')


def _server(req, rule: str) -> servers.Server:
    server = server_of_url(req)
    req.authorize(rule, {'project_id': server.project_id})
    return server


def migration_id(req) -> int | None:
    """The URL's migration id as a number; None if it is none (no migration has it)."""
    text = req.urlvars['migration_id']
    return int(text) if text.isdigit() else None


def list_server_migrations(req):
    _since(req, (2, 23))
    server = _server(req, rules.SERVER_INDEX)
    services = req.services
    found = moves.list_migrations(services.api_engine, services.cells,
                                  instance_uuid=server.uuid,
                                  statuses=sorted(views.IN_PROGRESS))
    return json_response({'migrations': [
        views.server_migration(req, f.migration) for f in found
        if f.migration.migration_type == migrations.LIVE_MIGRATION]})


def show_server_migration(req):
    _since(req, (2, 23))
    server = _server(req, rules.SERVER_SHOW)
    asked = req.urlvars['migration_id']
    services = req.services
    found = moves.migration_of_server(services.api_engine, services.cells, server.uuid,
                                      migration_id(req))
    if found is None:
        raise errors.NotFound(f'In-progress live migration {asked} is not found for server '
                              f'{server.uuid}.')
    if found.migration_type != migrations.LIVE_MIGRATION:
        raise errors.NotFound(f'Migration {asked} for server {server.uuid} is not '
                              f'live-migration.')
    if found.status not in views.IN_PROGRESS:
        raise errors.NotFound(f'Live migration {asked} for server {server.uuid} is not in '
                              f'progress.')
    return json_response({'migration': views.server_migration(req, found)})


def _conflict(action: str, uuid: str, exc: moves.MoveConflict) -> errors.Conflict:
    if isinstance(exc, moves.InvalidServerState):
        return errors.Conflict(f"Cannot '{action}' instance {uuid} while it is in {exc.attr} "
                               f"{exc.state}")
    return errors.Conflict(str(exc))


def delete_server_migration(req):
    _since(req, (2, 24))
    server = _server(req, rules.SERVER_DELETE)
    services = req.services
    try:
        moves.abort_live_migration(services.api_engine, services.cells,
                                   services.compute_api_for, req.work_context(), server.uuid,
                                   migration_id(req), in_queue=req.mv >= (2, 65))
    except moves.MoveConflict as exc:
        raise _conflict('abort live migration', server.uuid, exc) from None
    except moves.MigrationNotFoundForServer:
        raise errors.NotFound(f'Migration {req.urlvars["migration_id"]} not found for '
                              f'instance {server.uuid}') from None
    except moves.InvalidMigrationState as exc:
        raise errors.BadRequest(str(exc)) from None
    except servers.ServerNotFound:
        raise errors.NotFound(f'Instance {server.uuid} could not be found.') from None
    return empty_response(202)


def server_migration_action(req):
    _since(req, (2, 22))
    validate(schemas.FORCE_COMPLETE, req.json_body())
    server = _server(req, rules.SERVER_FORCE_COMPLETE)
    services = req.services
    try:
        moves.force_complete_live_migration(services.api_engine, services.cells,
                                            services.compute_api_for, req.work_context(),
                                            server.uuid, migration_id(req))
    except moves.MoveConflict as exc:
        raise _conflict('force_complete', server.uuid, exc) from None
    except moves.MigrationNotFoundForServer:
        raise errors.BadRequest(f'Migration {req.urlvars["migration_id"]} not found for '
                                f'instance {server.uuid}') from None
    except moves.InvalidMigrationState as exc:
        raise errors.BadRequest(str(exc)) from None
    except servers.ServerNotFound:
        raise errors.NotFound(f'Instance {server.uuid} could not be found.') from None
    return empty_response(202)
