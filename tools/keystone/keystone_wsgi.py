"""Keystone's WSGI application, for gunicorn (``keystone_wsgi:application``).

Runs inside .venv-keystone, never imported by cellplane. Keystone's factory
parses the process's command line with oslo.config, which would read
gunicorn's arguments as its own: it is given an empty one. Its config file is
``OS_KEYSTONE_CONFIG_FILES`` (tests/support/keystone.py sets it).
"""
import sys

sys.argv = sys.argv[:1]

from keystone.server.wsgi import initialize_public_application  # noqa: E402

application = initialize_public_application()
