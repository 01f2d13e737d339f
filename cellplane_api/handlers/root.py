"""Version discovery: ``GET /`` lists the versions, ``GET /v2.1`` shows the one served."""
from __future__ import annotations

from cellplane_api import microversion
from cellplane_api.request import json_response

UPDATED = '2013-07-23T11:33:21Z'


def _version(req, *, media_types: bool = False) -> dict:
    doc = {'id': 'v2.1', 'status': 'CURRENT', 'updated': UPDATED,
           'version': microversion.as_string(microversion.MAX_VERSION),
           'min_version': microversion.as_string(microversion.MIN_VERSION),
           'links': [{'rel': 'self', 'href': req.host_url + '/v2.1/'}]}
    if media_types:
        doc['links'].append({'rel': 'describedby', 'type': 'text/html',
                             'href': 'http://docs.openstack.org/'})
        doc['media-types'] = [{'base': 'application/json',
                               'type': 'application/vnd.openstack.compute+json;version=2.1'}]
    return doc


def versions(req):
    """``{"versions": [{"id": "v2.1", "status": "CURRENT", "version": "2.1", ...}]}``"""
    return json_response({'versions': [_version(req)]})


def version(req):
    """``{"version": {"id": "v2.1", ..., "media-types": [...]}}``"""
    return json_response({'version': _version(req, media_types=True)})
