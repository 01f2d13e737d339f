"""``POST /servers/{server_id}/action``: the move actions.

``migrate``, ``os-migrateLive``, ``resize``, ``confirmResize``, ``revertResize``,
``evacuate``.

Each reads the body, asks the policy and calls ``cellplane_api.moves``,
which the CLI's move commands call too. As Nova: ``migrate``,
``os-migrateLive``, ``resize`` and ``revertResize`` answer 202,
``confirmResize`` 204; a server not in a
state the action takes is 409 (conflictingRequest), an unknown flavor or
the flavor it has 400 (badRequest), another project's server 404. An
action this API does not serve (yet) is 400 naming it.

``evacuate`` answers as Nova with ``[api] enable_instance_password =
False`` at every microversion: 200 with an empty body (``adminPass`` is
accepted and means nothing: the fake driver has no guest to set it in).
A server whose host is up is 400 (Nova's ComputeServiceInUse), a target
host no cell has 404, the server's own host 400, ``force`` without a host
400; ``force`` with one is accepted, and the host is still claimed through
the scheduler (cellplane never places without a claim).
"""
from __future__ import annotations

from cellplane_api import errors, moves, servers
from cellplane_api.handlers.flavors import visible
from cellplane_api.handlers.servers import server_of_url
from cellplane_api.policies import server_actions as rules
from cellplane_api.request import empty_response
from cellplane_api.schemas import server_actions as schemas
from cellplane_api.schemas import validate
from cellplane_api.schemas.services import TRUE

_RULES = {schemas.MIGRATE: rules.MIGRATE, schemas.MIGRATE_LIVE: rules.MIGRATE_LIVE,
          schemas.RESIZE: rules.RESIZE,
          schemas.CONFIRM_RESIZE: rules.CONFIRM_RESIZE,
          schemas.REVERT_RESIZE: rules.REVERT_RESIZE, schemas.EVACUATE: rules.EVACUATE}


def server_action(req):
    body = req.json_body()
    if isinstance(body, dict) and len(body) == 1 and next(iter(body)) not in _RULES:
        raise errors.BadRequest(f'Invalid input for field/attribute {next(iter(body))}: '
                                f'this server action is not supported.')
    validate(schemas.action_schema(req.mv), body)
    [(action, asked)] = body.items()
    if action == schemas.EVACUATE:
        validate(schemas.evacuate_for(req.mv.minor), body)
    server = server_of_url(req)
    req.authorize(_RULES[action], {'project_id': server.project_id})
    services = req.services
    ctxt = req.work_context()
    args = (services.api_engine, services.cells, services.conductor, ctxt, server.uuid)
    try:
        if action in (schemas.MIGRATE, schemas.RESIZE):
            flavor = None
            if action == schemas.RESIZE:
                flavor = str(asked['flavorRef'])
                if visible(req, flavor) is None:
                    raise errors.BadRequest(f'Unable to find flavor {flavor}.')
            moves.migrate(*args, flavor=flavor)
        elif action == schemas.MIGRATE_LIVE:
            # block_migration, disk_over_commit (below 2.25) and force (2.30 to
            # 2.67) are accepted and mean nothing here: the fake driver has no
            # shared storage to tell apart, and a named host is always checked.
            moves.live_migrate(*args, host=asked['host'])
        elif action == schemas.EVACUATE:
            if asked.get('force') in TRUE and not asked.get('host'):
                raise errors.BadRequest("Can't force to a non-provided destination")
            moves.evacuate(*args, host=asked.get('host'),
                           service_down_time=services.service_down_time)
            return empty_response(200)
        elif action == schemas.CONFIRM_RESIZE:
            moves.confirm(*args)
            return empty_response(204)
        else:
            moves.revert(*args)
    except moves.TargetHostNotFound as exc:
        raise errors.NotFound(str(exc)) from None
    except moves.InvalidMove as exc:
        raise errors.BadRequest(str(exc)) from None
    except moves.MoveConflict as exc:
        raise errors.Conflict(f"Cannot '{action}' instance {server.uuid}: {exc}") from None
    except servers.ServerNotFound:
        raise errors.NotFound(f'Instance {server.uuid} could not be found.') from None
    return empty_response(202)
