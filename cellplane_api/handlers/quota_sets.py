"""``/os-quota-sets/{tenant_id}`` (show, defaults, detail, update, delete) over the ``[quota]`` driver.

A quota set at 2.1 (``id`` only when shown, not in an update's answer)::

    {"quota_set": {"id": "p1", "instances": 10, "cores": 20, "ram": 51200,
                   "server_groups": 10, "server_group_members": 10,
                   "metadata_items": 128, "key_pairs": 100, "injected_files": 5,
                   "injected_file_content_bytes": 10240,
                   "injected_file_path_bytes": 255, "fixed_ips": -1,
                   "floating_ips": -1, "security_groups": -1,
                   "security_group_rules": -1}}

From 2.36 the network fields are gone, from 2.57 the injected-file ones,
as in Nova. ``detail`` gives each resource as ``{"limit", "in_use",
"reserved"}`` (reserved is always 0: nothing is reserved ahead). Per-user
quotas (``user_id``) are not supported: asked for, they are a 400.

With ``[quota] driver = unified_limits`` the limits are Keystone's: shown
and detailed from there, while update and delete change nothing and
answer as they would (update: the project's limits, unchanged), as Nova
does with unified limits.
"""
from __future__ import annotations

from cellplane_api import errors, quotas
from cellplane_api.policies import quota_sets as rules
from cellplane_api.request import empty_response, json_response
from cellplane_api.schemas import quota_sets as schemas
from cellplane_api.schemas import validate


def shown_resources(mv) -> tuple[str, ...]:
    """The resources a quota set names at microversion ``mv``."""
    hidden = set()
    if mv >= (2, 36):
        hidden |= set(schemas.NETWORK)
    if mv >= (2, 57):
        hidden |= set(schemas.INJECTED)
    return tuple(r for r in quotas.RESOURCES if r not in hidden)


def _driver(req):
    return req.services.quotas


def _project(req, rule: str) -> str:
    project_id = req.urlvars['tenant_id']
    if req.GET.get('user_id') is not None:
        raise errors.BadRequest('Invalid input for query parameters user_id: per-user '
                                'quotas are not supported; quotas are per project.')
    req.authorize(rule, {'project_id': project_id})
    return project_id


def _limits_doc(req, limits: dict) -> dict:
    return {r: limits[r] for r in shown_resources(req.mv)}


def show_quota_set(req):
    project_id = _project(req, rules.SHOW)
    limits = _driver(req).limits(project_id)
    return json_response({'quota_set': {'id': project_id, **_limits_doc(req, limits)}})


def show_defaults(req):
    project_id = _project(req, rules.DEFAULTS)
    return json_response({'quota_set': {'id': project_id,
                                        **_limits_doc(req, _driver(req).defaults())}})


def show_detail(req):
    project_id = _project(req, rules.DETAIL)
    driver = _driver(req)
    limits = driver.limits(project_id)
    used = driver.usage(project_id).as_dict()
    return json_response({'quota_set': {'id': project_id, **{
        r: {'limit': limits[r], 'in_use': used.get(r, 0), 'reserved': 0}
        for r in shown_resources(req.mv)}}})


def update_quota_set(req):
    project_id = _project(req, rules.UPDATE)
    body = req.json_body()
    validate(schemas.UPDATE_2_57 if req.mv >= (2, 57) else
             schemas.UPDATE_2_36 if req.mv >= (2, 36) else schemas.UPDATE_2_1, body)
    asked = dict(body['quota_set'])
    force = str(asked.pop('force', False)).lower() == 'true'
    driver = _driver(req)
    if not driver.settable:
        # Nova with unified limits: the limits are Keystone's, the update
        # writes nothing and answers them.
        return json_response({'quota_set': _limits_doc(req, driver.limits(project_id))})
    try:
        limits = _driver(req).set_limits(project_id, {r: int(v) for r, v in asked.items()},
                                         force=force)
    except ValueError as exc:
        raise errors.BadRequest(str(exc)) from None
    return json_response({'quota_set': _limits_doc(req, limits)})


def delete_quota_set(req):
    project_id = _project(req, rules.DELETE)
    driver = _driver(req)
    if driver.settable:
        driver.forget(project_id)
    return empty_response(202)
