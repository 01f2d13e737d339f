"""Who is calling: the identity a request carries, and where it comes from.

Whatever the strategy, the caller is described by the identity headers
keystonemiddleware sets (X-User-Id, X-Project-Id, X-Roles,
OpenStack-System-Scope ...); ``credentials`` turns them into an
oslo.context ``RequestContext``, which is what the policy judges. A request
that reaches the API without a user is 401.

``keystone``: keystonemiddleware's ``auth_token`` (``keystone_auth``),
configured by ``[keystone_authtoken]``, validates X-Auth-Token before the
app sees the request, drops any identity header the client sent, and sets
them from the token. ``/`` (version discovery) needs no token.

``noauth2`` (tests and the demo; checks nothing, as the reference's): a
request must carry some X-Auth-Token, read as ``user[:project]`` (project:
the user when absent). The roles are the request's own X-Roles header, else
``admin`` for the user ``admin``, else none; with an
OpenStack-System-Scope header the caller is system scoped and gets no
project. Headers the request sends itself (X-Project-Id) win, as in the
reference's tests.
"""
from __future__ import annotations

from oslo_config import cfg
from oslo_context import context as oslo_context

from cellplane.wsgi import auth as wsgi_auth
from placement import errors

# Paths every strategy serves without a token.
OPEN_PATHS = frozenset(('', '/'))


def noauth2(environ: dict) -> None:
    """Turn a noauth2 token into the identity headers keystonemiddleware would set."""
    token = environ.get('HTTP_X_AUTH_TOKEN')
    if token is None:
        raise errors.Unauthorized('No X-Auth-Token header was given.')
    user_id, _, project_id = token.partition(':')
    if 'HTTP_X_ROLES' not in environ:
        environ['HTTP_X_ROLES'] = 'admin' if user_id == 'admin' else ''
    environ['HTTP_X_USER_ID'] = user_id
    if not environ.get('HTTP_OPENSTACK_SYSTEM_SCOPE'):
        environ['HTTP_X_TENANT_ID'] = project_id or user_id


def credentials(environ: dict, request_id: str) -> oslo_context.RequestContext:
    """The caller as the identity headers describe it; 401 without a user."""
    ctx = oslo_context.RequestContext.from_environ(environ, request_id=request_id)
    if ctx.user_id is None:
        raise errors.Unauthorized('The request carries no user identity.')
    return ctx


def keystone_auth(app, conf: cfg.ConfigOpts):
    """``app`` behind keystonemiddleware's auth_token, configured by ``conf``'s ``[keystone_authtoken]``."""
    return wsgi_auth.keystone_auth(app, conf, OPEN_PATHS)
