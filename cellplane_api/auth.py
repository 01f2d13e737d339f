"""Who is calling the compute API: keystonemiddleware's identity headers, or noauth2's.

``keystone`` (the default): keystonemiddleware's ``auth_token``, configured
by ``[keystone_authtoken]``, validates X-Auth-Token and sets X-User-Id,
X-Project-Id, X-Roles ... before the app sees the request. Version
discovery (``/``, ``/v2.1``) needs no token.

``noauth2`` (tests and the demo; checks nothing, as Nova's): the token is
``user[:project]`` (project: the user when absent); the roles are the
request's X-Roles header, else ``admin`` for the user ``admin``, else
``member,reader``. ``credentials`` turns the headers into the oslo.context
``RequestContext`` the policy judges; a request without a user is 401.
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_context import context as oslo_context

from cellplane.wsgi import auth as wsgi_auth
from cellplane_api import errors

OPEN_PATHS = frozenset(('', '/', '/v2.1', '/v2.1/'))
# The image catalog's discovery (cellplane_api/images_app.py), also open.
IMAGE_OPEN_PATHS = frozenset(('/image', '/image/', '/image/versions'))


def noauth2(environ: dict) -> None:
    """Turn a noauth2 token into the identity headers keystonemiddleware would set."""
    token = environ.get('HTTP_X_AUTH_TOKEN')
    if token is None:
        raise errors.Unauthorized('No X-Auth-Token header was given.')
    user_id, _, project_id = token.partition(':')
    if 'HTTP_X_ROLES' not in environ:
        environ['HTTP_X_ROLES'] = 'admin,member,reader' if user_id == 'admin' else 'member,reader'
    environ['HTTP_X_USER_ID'] = user_id
    environ['HTTP_X_TENANT_ID'] = project_id or user_id


def credentials(environ: dict, request_id: str) -> oslo_context.RequestContext:
    """The caller as the identity headers describe it; 401 without a user or project."""
    ctx = oslo_context.RequestContext.from_environ(environ, request_id=request_id)
    if ctx.user_id is None or ctx.project_id is None:
        raise errors.Unauthorized('The request carries no user and project identity.')
    return ctx


def keystone_auth(app, conf: cfg.ConfigOpts):
    """``app`` behind keystonemiddleware's auth_token, configured by ``[keystone_authtoken]``."""
    return wsgi_auth.keystone_auth(app, conf, OPEN_PATHS | IMAGE_OPEN_PATHS)
