"""``/os-server-groups``: create, list, show, delete, as Nova answers at 2.1 to 2.69.

A group document::

    2.1:   {"id", "name", "policies": ["anti-affinity"], "members": [...], "metadata": {}}
    2.13:  the same with "project_id" and "user_id"
    2.64:  {"id", "name", "policy": "anti-affinity", "rules": {...}, "members",
            "project_id", "user_id"}

``rules`` carry the group's failure-domain level and per-domain bound
(``cellplane_api.server_groups``: ``failure_domain``,
``max_server_per_domain``, and Nova's ``max_server_per_host``); below 2.64 a
group is made at the host level. Soft policies from 2.15. Members are the
servers of the group not deleted. A project sees its own groups; an admin
lists every project's with ``all_projects``. Another project's group is
404 (it is not told apart from a group that does not exist).
"""
from __future__ import annotations

from cellplane.objects import server_groups
from cellplane_api import errors
from cellplane_api import server_groups as groups
from cellplane_api.policies import server_groups as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import server_groups as schemas
from cellplane_api.schemas import validate
from rpc_schemas.request_spec import HOST_LEVEL

MAX_LIMIT = 1000


def _document(req, group: server_groups.ServerGroup) -> dict:
    doc = {'id': group.uuid, 'name': group.name}
    if req.mv >= (2, 64):
        doc.update(policy=group.policy, rules=groups.rules_of(group))
    else:
        doc.update(policies=[group.policy], metadata={})
    doc['members'] = list(group.members)
    if req.mv >= (2, 13):
        doc.update(project_id=group.project_id, user_id=group.user_id or '')
    return doc


def _one(req, rule: str) -> server_groups.ServerGroup:
    """The group of the URL if ``rule`` allows the caller it; 404 if another project's, else 403."""
    group_id = req.urlvars['server_group_id']
    try:
        group = server_groups.get(req.services.api_engine, group_id)
    except server_groups.GroupNotFound:
        group = None
    # get() falls back to names; the URL names a group by its id only.
    if group is None or group.uuid != group_id:
        raise errors.NotFound(f'Instance group {group_id} could not be found.')
    target = {'project_id': group.project_id}
    if not req.allowed(rule, target) and group.project_id != req.credentials.project_id:
        raise errors.NotFound(f'Instance group {group_id} could not be found.')
    req.authorize(rule, target)
    return group


def show_server_group(req):
    return json_response({'server_group': _document(req, _one(req, rules.SHOW))})


def delete_server_group(req):
    group = _one(req, rules.DELETE)
    try:
        server_groups.delete(req.services.api_engine, group.uuid)
    except server_groups.GroupNotFound:
        raise errors.NotFound(f'Instance group {group.uuid} could not be found.') from None
    return empty_response(204)


def _whole_number(req, name: str) -> int | None:
    value = req.GET.get(name)
    if value is None:
        return None
    if not value.isdigit():
        raise errors.BadRequest(f'Invalid input for query parameters {name}. Value: {value}. '
                                f'It is not a whole number >= 0.')
    return int(value)


def list_server_groups(req):
    req.authorize(rules.INDEX)
    # As Nova: all_projects (any value) lists every project's for whom the rule
    # allows it, and the caller's own for anyone else.
    every = 'all_projects' in req.GET and req.allowed(rules.INDEX_ALL_PROJECTS)
    limit, offset = _whole_number(req, 'limit'), _whole_number(req, 'offset') or 0
    found = server_groups.list_all(
        req.services.api_engine,
        project_id=None if every else req.credentials.project_id, by_creation=True)
    page = found[offset:offset + min(MAX_LIMIT, limit or MAX_LIMIT)]
    return json_response({'server_groups': [_document(req, g) for g in page]})


def _placement(req, asked: dict) -> tuple[str, str, int | None]:
    """(policy, level, max_per_domain) the body asks for at the request's version."""
    if req.mv < (2, 64):
        return asked['policies'][0], HOST_LEVEL, None
    policy = asked['policy']
    try:
        level, bound = groups.from_rules(policy, asked.get('rules') or {})
    except groups.RuleError as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute server_group.rules.'
                                f'{exc.rule}: {exc}') from None
    return policy, level, bound


def create_server_group(req):
    req.authorize(rules.CREATE)
    body = req.json_body()
    validate(schemas.create_for(req.mv), body)
    asked = body['server_group']
    policy, level, bound = _placement(req, asked)
    caller = req.credentials
    try:
        group = groups.create(req.services.api_engine, project_id=caller.project_id,
                              user_id=caller.user_id, name=asked['name'], policy=policy,
                              level=level, max_per_domain=bound,
                              quota=req.services.group_quota)
    except groups.QuotaExceeded as exc:
        # The driver's words: 'Quota exceeded, too many server groups.' from
        # the database one, oslo.limit's from unified limits (as Nova's).
        raise errors.Forbidden(str(exc)) from None
    except server_groups.UnknownLevel as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute server_group.rules.'
                                f'{groups.RULE_FAILURE_DOMAIN}: {exc}') from None
    except server_groups.GroupExists as exc:
        raise errors.Conflict(str(exc)) from None
    except server_groups.ServerGroupError as exc:
        raise errors.BadRequest(f'Invalid input for field/attribute server_group: '
                                f'{exc}') from None
    return json_response({'server_group': _document(req, group)})
