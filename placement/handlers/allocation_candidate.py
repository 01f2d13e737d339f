"""GET /allocation_candidates (1.10+): where could this request be placed?

Parses the request groups and request-wide parameters, asks
placement/objects/allocation_candidates/, and renders::

    {"allocation_requests": [
        {"allocations": {RP_UUID: {"resources": {"VCPU": 1}}},   # 1.12+ (a list before)
         "mappings": {"": [RP_UUID]}}],                           # 1.34+
     "provider_summaries": {
        RP_UUID: {"resources": {"VCPU": {"capacity": 64, "used": 2}},  # all classes 1.27+
                  "traits": ["HW_CPU_X86_AVX2"],                       # 1.17+
                  "parent_provider_uuid": null,                        # 1.29+
                  "root_provider_uuid": RP_UUID}}}                     # 1.29+
"""
from __future__ import annotations

import re

import msgspec
import webob

from placement import errors, querystring
from placement.microversion import min_version
from placement.objects import allocation_candidates as ac_obj
from placement.response import http_date
from placement.schemas import allocation_candidate as schema
from placement.schemas import common

_KEYS = ('resources', 'required', 'member_of', 'in_tree')
_KEY = re.compile(r'^(%s)(%s)?$' % ('|'.join(_KEYS), common.GROUP_PAT))
_KEY_1_33 = re.compile(r'^(%s)(%s)?$' % ('|'.join(_KEYS), common.GROUP_PAT_1_33))


@min_version('1.10')
def list_allocation_candidates(req):
    req.query_params(schema.get_schema(req.mv))
    wide = _request_wide(req)
    groups = _groups(req, wide)
    if wide.group_policy is None and sum(1 for s in groups if s) > 1:
        raise errors.BadRequest(
            'The "group_policy" parameter is required when specifying more '
            'than one "resources{N}" parameter.')
    try:
        found = ac_obj.find_candidates(req.context.engine, groups, wide)
    except ac_obj.UnknownResourceClass as exc:
        raise errors.BadRequest(
            f'Invalid resource class in resources parameter: {exc}') from None
    except ac_obj.UnknownTraits as exc:
        raise errors.BadRequest(str(exc)) from None
    requested = {rc for g in groups.values() for rc in g.resources}
    body = {'allocation_requests': _requests(req, found.allocation_requests),
            'provider_summaries': _summaries(req, found.summaries, requested)}
    return _json_response(req, body)


_ENCODER = msgspec.json.Encoder()


def _json_response(req, body) -> webob.Response:
    # A thousand candidates make half a megabyte of JSON: msgspec encodes it
    # four times faster than the json module, a sizeable part of the request.
    resp = webob.Response(body=_ENCODER.encode(body), content_type='application/json',
                          charset=None)
    if req.mv >= (1, 15):
        resp.headers['Last-Modified'] = http_date(None)
        resp.headers['Cache-Control'] = 'no-cache'
    return resp


def _request_wide(req) -> ac_obj.RequestWide:
    wide = ac_obj.RequestWide(nested_aware=req.mv >= (1, 29),
                              randomize=req.context.randomize_candidates)
    limit = req.GET.getall('limit')
    if limit:
        wide.limit = int(limit[0])
    policy = req.GET.getall('group_policy')
    if policy:
        wide.group_policy = policy[0]
    root_required = req.GET.getall('root_required')
    if root_required:
        if len(root_required) > 1:
            raise errors.BadRequest(
                "Query parameter 'root_required' may be specified only once.",
                code=errors.ILLEGAL_DUPLICATE_QUERYPARAM)
        required, forbidden = querystring.traits(
            root_required[0], allow_forbidden=True, allow_any=False)
        wide.root_required = {t for any_of in required for t in any_of}
        wide.root_forbidden = forbidden
        conflicts = wide.root_required & wide.root_forbidden
        if conflicts:
            raise errors.BadRequest(
                'Conflicting required and forbidden traits found in '
                f"root_required: {', '.join(sorted(conflicts))}",
                code=errors.QUERYPARAM_BAD_VALUE)
    for value in req.GET.getall('same_subtree'):
        suffixes = {part.strip() for part in value.split(',')}
        if '' in suffixes:
            raise errors.BadRequest(
                'Empty string (unsuffixed group) can not be specified in '
                '`same_subtree` ', code=errors.QUERYPARAM_BAD_VALUE)
        wide.same_subtrees.append(suffixes)
    return wide


def _groups(req, wide: ac_obj.RequestWide) -> dict[str, ac_obj.RequestGroup]:
    pattern = _KEY_1_33 if req.mv >= (1, 33) else _KEY
    groups: dict[str, ac_obj.RequestGroup] = {}
    for key, value in req.GET.items():
        match = pattern.match(key)
        if not match:
            continue
        prefix, suffix = match.group(1), match.group(2) or ''
        group = groups.setdefault(suffix, ac_obj.RequestGroup(suffix=suffix))
        if prefix == 'resources':
            group.resources = querystring.resources(value)
        elif prefix == 'required':
            group.required_traits, group.forbidden_traits = \
                querystring.required_params(req, suffix)
        elif prefix == 'member_of':
            group.member_of, group.forbidden_aggs = \
                querystring.member_of_params(req, suffix)
        else:
            group.in_tree = querystring.in_tree(value)
    if req.mv >= (1, 36):
        _check_resourceless(groups, wide)
    else:
        _check_orphans(groups)
    if req.mv >= (1, 22):
        _check_conflicting_traits(groups)
    return groups


def _check_resourceless(groups, wide) -> None:
    resourceless = [s for s, g in groups.items() if not g.resources]
    if len(resourceless) == len(groups):
        raise errors.BadRequest(
            'There must be at least one resources or resources[$S] parameter.',
            code=errors.QUERYPARAM_MISSING_VALUE)
    in_subtrees = set().union(*wide.same_subtrees)
    bad = [s for s in resourceless if s not in in_subtrees]
    if bad:
        raise errors.BadRequest(
            'Resourceless suffixed group request should be specified in '
            f'`same_subtree` query param: bad group(s) - {bad}.',
            code=errors.QUERYPARAM_BAD_VALUE)
    unknown = [s for s in in_subtrees if s not in groups]
    if unknown:
        raise errors.BadRequest(
            'Real suffixes should be specified in `same_subtree`: '
            f'{unknown} not found in {list(groups)}.',
            code=errors.QUERYPARAM_BAD_VALUE)


def _check_orphans(groups) -> None:
    orphans = [f'required{s}' for s, g in groups.items()
               if g.required_traits and not g.resources]
    if orphans:
        raise errors.BadRequest(
            'All traits parameters must be associated with resources.  Found '
            f"the following orphaned traits keys: {', '.join(orphans)}")
    orphans = [f'member_of{s}' for s, g in groups.items()
               if not g.resources and (g.member_of or g.forbidden_aggs)]
    if orphans:
        raise errors.BadRequest(
            'All member_of parameters must be associated with resources. Found '
            f"the following orphaned member_of keys: {', '.join(orphans)}")
    if not all(g.resources for g in groups.values()):
        raise errors.BadRequest('All request groups must specify resources.')
    if not groups:
        raise errors.BadRequest(
            'At least one request group (`resources` or `resources{$S}`) is required.')


def _check_conflicting_traits(groups) -> None:
    conflicts = []
    for suffix, g in groups.items():
        for any_of in g.required_traits:
            if all(t in g.forbidden_traits for t in any_of):
                conflicts.append(f"required{suffix}: ({', '.join(sorted(any_of))})")
    if conflicts:
        raise errors.BadRequest(
            'Conflicting required and forbidden traits found in the following '
            f"traits keys: {', '.join(sorted(conflicts))}")


def _requests(req, requests: list[ac_obj.AllocationRequest]) -> list[dict]:
    if req.mv < (1, 12):
        return [{'allocations': [
                    {'resource_provider': {'uuid': rp}, 'resources': resources}
                    for rp, resources in ar.allocations.items()]}
                for ar in requests]
    with_mappings = req.mv >= (1, 34)
    out = []
    for ar in requests:
        entry = {'allocations': {rp: {'resources': resources}
                                 for rp, resources in ar.allocations.items()}}
        if with_mappings:
            entry['mappings'] = ar.mappings
        out.append(entry)
    return out


def _summaries(req, summaries: list[ac_obj.CandidateSummary], requested) -> dict:
    all_classes = req.mv >= (1, 27)
    with_traits = req.mv >= (1, 17)
    with_tree = req.mv >= (1, 29)
    out = {}
    for s in summaries:
        resources = s.resources
        if not all_classes:
            resources = {rc: r for rc, r in resources.items() if rc in requested}
        entry = {'resources': resources}
        if with_traits:
            entry['traits'] = s.traits
        if with_tree:
            entry['parent_provider_uuid'] = s.parent_uuid
            entry['root_provider_uuid'] = s.root_uuid
        out[s.uuid] = entry
    return out
