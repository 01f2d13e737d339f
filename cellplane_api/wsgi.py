"""The compute API's WSGI application, built in-process from the API role's parts.

    app = make_app(services, conf=conf)   # middleware as [api], [cors], [keystone_authtoken] ask

One callable does, in order: noauth2 and the caller's
credentials (401), microversion (400/406), body size (413), routing
(404/405), the handler (which asks the policy: 403); any unexpected
exception is Nova's 500 ``computeFault``. Every answer echoes the version
with ``Vary``. Paths under ``/image`` go to the read-only image catalog
(``cellplane_api/images_app.py``) instead, inside the same middleware.
Middleware around it: ``cellplane_api/deploy.py``.
"""
from __future__ import annotations

import logging
import uuid

from cellplane.wsgi import metrics
from cellplane_api import auth, errors, images_app, microversion
from cellplane_api.handler import Router
from cellplane_api.request import ComputeRequest, Services

LOG = logging.getLogger(__name__)


def _observe(method: str, route: str, status: str, seconds: float) -> None:
    metrics.observe('api', 'the compute API', method, route, status, seconds)


class ComputeApp:
    """The WSGI callable. Thread-safe: it keeps no per-request state."""

    def __init__(self, services: Services, *, noauth2: bool = False,
                 count_requests: bool = False):
        self.services = services
        self.noauth2 = noauth2
        self.router = Router()
        self.count_requests = count_requests

    def __call__(self, environ, start_response):
        if not self.count_requests:
            return self._answer(environ, start_response, {})
        return metrics.counted(environ, start_response, self._answer, _observe)

    def _answer(self, environ, start_response, seen: dict):
        # Set by oslo.middleware's request id around this app (deploy.py).
        request_id = environ.get('openstack.request_id') or f'req-{uuid.uuid4()}'
        environ['openstack.request_id'] = request_id
        version = None
        try:
            req = ComputeRequest(environ)
            path = req.path_info
            method = environ['REQUEST_METHOD']
            credentials = None
            if path not in auth.OPEN_PATHS:
                if self.noauth2:
                    auth.noauth2(environ)
                credentials = auth.credentials(environ, request_id)
            version = microversion.from_environ(environ)
            clen = environ.get('CONTENT_LENGTH')
            if clen and clen.isdigit() and int(clen) > self.services.max_body_size:
                raise errors.RequestTooLarge(
                    f'Request is too large: the body has {clen} bytes, at most '
                    f'{self.services.max_body_size} are accepted.')
            handler, urlvars, template, prefix = self.router.match(path, method)
            seen['route'] = template
            req.mv = version
            req.credentials = credentials
            req.services = self.services
            req.urlvars = urlvars
            req.prefix = prefix or '/v2.1'
            resp = handler(req)
            status, headers, body = resp.status, resp.headerlist, resp.app_iter
        except errors.ComputeError as exc:
            status, headers, raw = errors.render(exc)
            body = [raw]
        except Exception:  # the API never returns a traceback
            LOG.exception('Unexpected error in %s %s', environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'))
            status, headers, raw = errors.render(errors.ComputeError(
                'Unexpected API Error. Please report this and attach the request id.'))
            body = [raw]
        if version is not None:
            headers.extend(microversion.answer_headers(version))
        else:
            # Refused before a version was settled (401, a 400 or 406 version): none to echo.
            headers.append(('Vary', microversion.VARY))
        start_response(status, headers)
        return body


def make_app(services: Services, *, conf=None, auth_strategy: str | None = None,
             count_requests: bool = False):
    """The compute API's WSGI app over ``services``, in the middleware ``conf`` asks for.

    ``conf``: the options of ``cellplane_api/service_conf.py``; None (tests):
    their defaults, with noauth2.
    """
    from cellplane_api import deploy, service_conf
    if conf is None:
        conf = service_conf.defaults()
        auth_strategy = auth_strategy or 'noauth2'
    if auth_strategy is not None:
        conf.set_override('auth_strategy', auth_strategy, group='api')
    noauth2 = conf.api.auth_strategy == 'noauth2'
    app = ComputeApp(services, noauth2=noauth2, count_requests=count_requests)
    return deploy.wrap(Mount(app, images_app.ImagesApp(services, noauth2=noauth2)), conf)


class Mount:
    """Paths under ``/image`` to the image catalog, everything else to the compute API."""

    def __init__(self, compute, images):
        self.compute = compute
        self.images = images

    def __call__(self, environ, start_response):
        path = environ.get('PATH_INFO', '')
        if path == images_app.PREFIX or path.startswith(images_app.PREFIX + '/'):
            return self.images(environ, start_response)
        return self.compute(environ, start_response)
