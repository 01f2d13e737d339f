"""GET /: version discovery (open to everyone, no token needed)."""
from __future__ import annotations

from placement import microversion
from placement.response import json_response


def home(req):
    """The single API version and its microversion range::

        {"versions": [{"id": "v1.0", "min_version": "1.0",
                       "max_version": "1.39", "status": "CURRENT",
                       "links": [{"rel": "self", "href": ""}]}]}
    """
    min_version = microversion.min_version_string()
    body = {'versions': [{
        'id': f'v{min_version}',
        'max_version': microversion.max_version_string(),
        'min_version': min_version,
        'status': 'CURRENT',
        # Relative on purpose, as the reference: no proxy address to track.
        'links': [{'rel': 'self', 'href': ''}],
    }]}
    return json_response(req, body, last_modified=None)


home.any_accept = True   # as the reference: version discovery ignores Accept
