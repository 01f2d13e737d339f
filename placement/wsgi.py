"""The Placement WSGI application, built in-process from an engine.

    app = make_app(engine, auth_strategy='noauth2')
    app = make_app(engine, conf=conf)     # [api], [oslo_policy], [cors], [keystone_authtoken]

is all a test, the embedded mode or the daemon's worker needs: no HTTP
server, no global config. Health check, CORS and keystonemiddleware are
middleware around it (``placement/deploy.py``); the rest is one callable
that does what the reference spreads over a middleware stack, in the same
order (so the same error wins when several apply): request id, noauth2 and
the caller's credentials (401), microversion (400/406),
content-length/type sanity (400), routing (404/405), policy (403), Accept
(406), the handler; a database too busy to answer (connection pool
exhausted, SQLite locked past its timeout) or one that cannot be reached
(restarting, refusing connections, a connection dropped) becomes a 503
with ``Retry-After``, any other unexpected exception a JSON 500.
"""
from __future__ import annotations

import logging
import re
import uuid

import sqlalchemy as sa
import webob.acceptparse
from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane.wsgi import metrics as request_metrics
from placement import auth, deploy, errors, microversion, policy
from placement import conf as placement_conf
from placement import handler as handler_mod
from placement import metrics as placement_metrics
from placement.context import RequestContext
from placement.request import PlacementRequest

LOG = logging.getLogger(__name__)

_REQUEST_ID_RE = re.compile(
    r'^req-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$')
_JSON = 'application/json'


class PlacementApp:
    """The WSGI callable. Thread-safe: it keeps no per-request state."""

    def __init__(self, engine: Engine, enforcer: policy.PolicyEnforcer,
                 routes: dict | None = None, *, noauth2: bool = False,
                 randomize_candidates: bool = False, count_requests: bool = False):
        self.engine = engine
        self.randomize_candidates = randomize_candidates
        self.enforcer = enforcer
        # Otherwise keystonemiddleware, around this app, set the identity.
        self.noauth2 = noauth2
        self.router = handler_mod.Router(routes or handler_mod.ROUTES)
        # The daemon's workers count for /metrics (placement/metrics.py).
        self.count_requests = count_requests

    def __call__(self, environ, start_response):
        if not self.count_requests:
            return self._answer(environ, start_response, {})
        return request_metrics.counted(environ, start_response, self._answer,
                                       placement_metrics.observe)

    def _answer(self, environ, start_response, seen: dict):
        request_id = environ.get('HTTP_X_OPENSTACK_REQUEST_ID')
        if not request_id or not _REQUEST_ID_RE.match(request_id):
            request_id = f'req-{uuid.uuid4()}'
        environ['openstack.request_id'] = request_id
        version = None
        try:
            req = PlacementRequest(environ)
            try:
                path = req.path_info
            except UnicodeError:   # not UTF-8, or not the latin-1 str WSGI promises
                raise errors.NotFound('The request path is not valid UTF-8.') from None
            if '\x00' in path:
                raise errors.NotFound('The request path contains a NUL character.')
            query = environ.get('QUERY_STRING')
            if query and ('%00' in query or '\x00' in query):
                raise errors.BadRequest(
                    'Invalid query string parameters: NUL characters are not allowed')
            method = environ['REQUEST_METHOD']
            if path in auth.OPEN_PATHS:
                credentials = None
            else:
                if self.noauth2:
                    auth.noauth2(environ)
                credentials = auth.credentials(environ, request_id)
            version = microversion.from_environ(environ)
            req.mv = version
            _check_content_headers(environ)
            handler, urlvars, template = self.router.match(path, method)
            seen['route'] = template
            gate = getattr(handler, 'min_version', None)
            if gate is not None and version < gate:
                if handler.min_version_status == 405:
                    raise errors.MethodNotAllowed(
                        'The method specified is not allowed for this resource.')
                raise errors.NotFound(
                    f'The resource is not available at microversion '
                    f'{version.major}.{version.minor}.')
            if method == 'GET' and not getattr(handler, 'any_accept', False):
                _check_accept(environ)
            if credentials is not None:
                target_of = getattr(handler, 'policy_target', None)
                self.enforcer.authorize(method, template, credentials,
                                        target_of(req) if target_of else None)
            req.urlvars = urlvars
            req.context = RequestContext(self.engine, credentials, request_id,
                                         self.randomize_candidates)
            resp = handler(req)
            status = resp.status
            headers = resp.headerlist
            body = resp.app_iter
        except errors.PlacementError as exc:
            status, headers, body = errors.render(exc, environ, request_id, version)
            body = [body]
        except Exception as raised:  # the API never returns a traceback
            exc = errors.database_away(raised)
            if exc is not None:
                # The engine said the outage once (cellplane.outage): one
                # line per outage, not one per request.
                LOG.debug('%s %s answered 503: %s', environ.get('REQUEST_METHOD'),
                          environ.get('PATH_INFO'), exc.detail)
            elif (exc := errors.database_busy(raised)) is not None:
                LOG.warning('%s %s answered 503: %s', environ.get('REQUEST_METHOD'),
                            environ.get('PATH_INFO'), exc.detail)
            else:
                LOG.exception('Unexpected error in %s %s', environ.get('REQUEST_METHOD'),
                              environ.get('PATH_INFO'))
                exc = errors.InternalServerError('An unexpected error occurred.')
            status, headers, body = errors.render(exc, environ, request_id, version)
            body = [body]
        headers.append(('x-openstack-request-id', request_id))
        if version is not None:
            headers.append(('OpenStack-API-Version', microversion.header_value(version)))
            headers.append(('Vary', 'openstack-api-version'))
        start_response(status, headers)
        return body


def _check_content_headers(environ) -> None:
    clen = environ.get('CONTENT_LENGTH')
    if clen:
        try:
            length = int(clen)
        except ValueError:
            raise errors.BadRequest('content-length header must be an integer') from None
        if length > 0 and not environ.get('CONTENT_TYPE'):
            raise errors.BadRequest(
                'content-type header required when content-length > 0')


def _check_accept(environ) -> None:
    accept = environ.get('HTTP_ACCEPT')
    if not accept or _JSON in accept or '*/*' in accept:
        return
    offers = webob.acceptparse.create_accept_header(accept).acceptable_offers([_JSON])
    if not offers:
        raise errors.NotAcceptable(f'Only {_JSON} is provided')


def make_app(engine: Engine, *, auth_strategy: str | None = None,
             conf: cfg.ConfigOpts | None = None, sync_standards: bool = True,
             randomize_candidates: bool = False, count_requests: bool = False):
    """The Placement WSGI app on ``engine`` (schema already migrated), in
    the middleware ``conf`` asks for (``placement/deploy.py``).

    ``conf``: the options of ``placement/conf.py``; None (tests, the
    embedded mode): their defaults, with noauth2. ``auth_strategy``
    overrides ``[api] auth_strategy``. ``sync_standards`` makes sure every
    standard resource class and trait is in the database (cheap when they
    already are); the daemon does it once before forking its workers and
    passes False.
    """
    if conf is None:
        conf = placement_conf.defaults()
        auth_strategy = auth_strategy or 'noauth2'
    if auth_strategy is not None:
        conf.set_override('auth_strategy', auth_strategy, group='api')
    if sync_standards:
        from placement.objects import standards
        standards.sync(engine)
    app = PlacementApp(engine, policy.PolicyEnforcer(conf),
                       noauth2=conf.api.auth_strategy == 'noauth2',
                       randomize_candidates=randomize_candidates,
                       count_requests=count_requests)
    return deploy.wrap(app, conf)


def app_from_conf(conf, *, sync_standards: bool = True):
    """Build engine and app from a loaded config ([placement_database], [api], ...)."""
    from cellplane import config
    from cellplane.db import engines
    db = conf.placement_database
    engines.name_process('cellplane-placement')
    engine = engines.create_engine(
        db.connection, pool_size=db.pool_size, max_overflow=db.max_overflow,
        pool_options='[placement_database] pool_size, max_overflow'
                     + config.describe_location(conf, 'pool_size', 'placement_database'))
    app = make_app(engine, conf=conf, sync_standards=sync_standards,
                   randomize_candidates=conf.placement.randomize_allocation_candidates,
                   count_requests=bool(conf.metrics.bind_port))
    from placement.objects import claim_function
    try:
        claim_function.warm_up(engine, min(conf.api.worker_threads, db.pool_size))
    except sa.exc.DBAPIError as exc:
        # Only a head start: the requests will connect when they come.
        LOG.warning('could not warm the database connections: %s', exc)
    return app
