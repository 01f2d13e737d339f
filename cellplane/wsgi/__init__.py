"""The WSGI pieces every HTTP daemon shares (Placement, the compute API).

``server``: granian's workers and their loader; ``requestlog``: one INFO
line per request; ``stack``: the health check in front of the middleware;
``metrics``: requests counted by route and status; ``microversion``: which
version a request asks for; ``auth``: keystonemiddleware except for open paths.
A service's own errors, routes and microversions stay in its package.
"""
