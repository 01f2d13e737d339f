"""The image catalog over HTTP at ``/image``: the read-only part of Glance's v2 API that clients call.

    GET /image                  version discovery (300, as Glance's root)
    GET /image/versions         the same, 200
    GET /image/v2/images        list: filters id, name, status, visibility, os_hidden
                                and any property (``?hw_architecture=x86_64``), each
                                with Glance's ``in:a,b``; limit, marker; sort_key/sort_dir
    GET /image/v2/images/{id}   one image

This is what ``openstack server create --image NAME`` and openstacksdk ask
the catalog's ``image`` service for (``cellplane_api/image_catalog.py`` says
why cellplane has no image service of its own). An operator registers
``http://HOST:8774/image`` as the ``image`` endpoint in Keystone. Writing
(``POST``, ``PATCH``, ``DELETE``, upload, download) is 405 naming the
catalog file: images are added by editing it. Errors are Glance's (WebOb's
bodies, JSON when asked). Authentication is the compute API's (the same
auth_token or noauth2 in front); the rules are Glance's ``get_images`` and
``get_image`` (``cellplane_api/policies/images.py``).
"""
from __future__ import annotations

import json
import logging
import re
from urllib.parse import urlencode

import webob
import webob.exc

from cellplane_api import auth, errors
from cellplane_api.image_catalog import Image
from cellplane_api.policies import images as rules
from cellplane_api.request import Services

LOG = logging.getLogger(__name__)
PREFIX = '/image'
# Discovery answers without a token, as Glance's does.
OPEN_PATHS = auth.IMAGE_OPEN_PATHS
DEFAULT_LIMIT = 25
MAX_LIMIT = 1000
_ONE = re.compile(r'^/v2/images/(?P<image_id>[^/]+)$')
_PAGING = frozenset(('limit', 'marker', 'sort_key', 'sort_dir'))
_SORT_KEYS = ('name', 'id', 'created_at', 'updated_at', 'size', 'min_disk', 'min_ram',
              'disk_format', 'container_format', 'status', 'visibility')


def _time(image: Image) -> str:
    return image.updated_at.strftime('%Y-%m-%dT%H:%M:%SZ')


def document(image: Image) -> dict:
    """``image`` as Glance v2 shows it: its attributes, then its properties at the top level."""
    return {
        'id': image.id, 'name': image.name, 'status': 'active', 'visibility': 'public',
        'protected': False, 'os_hidden': False, 'checksum': None, 'os_hash_algo': None,
        'os_hash_value': None, 'owner': None, 'size': image.size, 'virtual_size': None,
        'min_ram': image.min_ram, 'min_disk': image.min_disk,
        'disk_format': image.disk_format, 'container_format': image.container_format,
        'created_at': _time(image), 'updated_at': _time(image), 'tags': [],
        'self': f'/v2/images/{image.id}', 'file': f'/v2/images/{image.id}/file',
        'schema': '/v2/schemas/image', **image.properties,
    }


class ImagesApp:
    """The WSGI app for paths under ``/image``. Thread-safe: it keeps no per-request state."""

    def __init__(self, services: Services, *, noauth2: bool = False):
        self.services = services
        self.noauth2 = noauth2

    def __call__(self, environ, start_response):
        req = webob.Request(environ)
        try:
            resp = self._answer(req)
        except webob.exc.HTTPException as exc:
            resp = exc
        except Exception:  # the API never returns a traceback
            LOG.exception('Unexpected error in %s %s', req.method, req.path_info)
            resp = webob.exc.HTTPInternalServerError(
                explanation='Unexpected error in the image catalog; see the API\'s log.')
        return resp(environ, start_response)

    def _answer(self, req: webob.Request):
        path = req.path_info[len(PREFIX):]
        if req.path_info in OPEN_PATHS:
            if req.method != 'GET':
                raise webob.exc.HTTPMethodNotAllowed(headers={'Allow': 'GET'})
            return self._versions(req, status=200 if path == '/versions' else 300)
        credentials = self._caller(req)
        if path == '/v2/images':
            rule, handler, kwargs = rules.GET_IMAGES, self._list, {}
        elif (found := _ONE.match(path)) is not None:
            rule, handler, kwargs = rules.GET_IMAGE, self._show, found.groupdict()
        else:
            raise webob.exc.HTTPNotFound(explanation='The resource could not be found: the '
                                                     'image catalog serves /v2/images only.')
        if req.method != 'GET':
            raise webob.exc.HTTPMethodNotAllowed(
                explanation='The image catalog is read-only: images are added by editing '
                            'the file [image_catalog] images_file names.',
                headers={'Allow': 'GET'})
        if not self.services.enforcer.allowed(rule, credentials):
            raise webob.exc.HTTPForbidden(explanation=f'Policy doesn\'t allow {rule} to be '
                                                      f'performed.')
        return handler(req, **kwargs)

    def _caller(self, req: webob.Request):
        try:
            if self.noauth2:
                auth.noauth2(req.environ)
            return auth.credentials(req.environ, req.environ.get('openstack.request_id', ''))
        except errors.Unauthorized as exc:
            raise webob.exc.HTTPUnauthorized(explanation=exc.message) from None

    def _versions(self, req: webob.Request, *, status: int) -> webob.Response:
        href = f'{req.host_url}{req.script_name}{PREFIX}/v2/'
        return _json({'versions': [{'id': 'v2.0', 'status': 'CURRENT',
                                    'links': [{'rel': 'self', 'href': href}]}]}, status)

    def _show(self, req: webob.Request, image_id: str) -> webob.Response:
        image = self.services.images.get(image_id) if self.services.images else None
        if image is None:
            raise webob.exc.HTTPNotFound(explanation=f'No image found with ID {image_id}')
        return _json(document(image))

    def _list(self, req: webob.Request) -> webob.Response:
        params = req.GET
        limit = _limit(params.get('limit'))
        docs = [document(i) for i in (self.services.images.images()
                                      if self.services.images else [])]
        for key, value in params.items():
            if key in _PAGING:
                continue
            if key == 'os_hidden':
                # Every image of the catalog is shown: none is hidden.
                docs = docs if value.lower() == 'false' else []
                continue
            # Glance's ``in:`` operator: any of a comma-separated list
            # (openstack server list asks for its servers' images so).
            wanted = set(value[3:].split(',')) if value.startswith('in:') else {value}
            docs = [d for d in docs if key in d and _text(d[key]) in wanted]
        docs = _sorted(docs, params.get('sort_key', 'created_at'),
                       params.get('sort_dir', 'desc'))
        marker = params.get('marker')
        if marker is not None:
            ids = [d['id'] for d in docs]
            if marker not in ids:
                raise webob.exc.HTTPBadRequest(explanation=f'marker {marker} could not be '
                                                           f'found.')
            docs = docs[ids.index(marker) + 1:]
        body = {'images': docs[:limit], 'first': '/v2/images', 'schema': '/v2/schemas/images'}
        if len(docs) > limit:
            query = {k: v for k, v in params.items() if k != 'marker'}
            body['next'] = '/v2/images?' + urlencode({**query, 'marker': docs[limit - 1]['id']})
        return _json(body)


def _limit(value: str | None) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if not value.isdigit():
        raise webob.exc.HTTPBadRequest(explanation=f'limit param must be an integer, '
                                                   f'not {value!r}')
    return min(int(value), MAX_LIMIT)


def _sorted(docs: list[dict], key: str, direction: str) -> list[dict]:
    if key not in _SORT_KEYS:
        raise webob.exc.HTTPBadRequest(explanation=f'Unsupported sort_key {key!r}: one of '
                                                   f'{", ".join(_SORT_KEYS)}')
    if direction not in ('asc', 'desc'):
        raise webob.exc.HTTPBadRequest(explanation=f'Unsupported sort_dir {direction!r}: '
                                                   f'asc or desc')
    # Ties broken by id, as Glance's pagination needs a total order.
    return sorted(docs, key=lambda d: (d[key] is None, 0 if d[key] is None else d[key], d['id']),
                  reverse=direction == 'desc')


def _text(value) -> str:
    return json.dumps(value) if isinstance(value, bool) or value is None else str(value)


def _json(body: dict, status: int = 200) -> webob.Response:
    resp = webob.Response(status=status, content_type='application/json', charset=None)
    resp.body = json.dumps(body).encode()
    return resp
