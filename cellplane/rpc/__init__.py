"""RPC plumbing over oslo.messaging: transports, context, payload serializer, servers, clients.

``import oslo_messaging`` pulls in eventlet (through oslo.service), which
warns at import time that it is deprecated. cellplane never uses eventlet
(servers run oslo.messaging's threading executor), so that one warning is
filtered here, before any module of this package imports oslo.messaging;
every cellplane module imports oslo.messaging through this package.

For the same reason eventlet is told not to load its green DNS resolver
(``EVENTLET_NO_GREENDNS``, unless the environment says otherwise): that
resolver and dnspython are most of eventlet's import, about a third of a
second of CPU at every daemon's and command's start, for a resolver that
only a monkey-patched process would use.
"""
import os
import warnings

os.environ.setdefault('EVENTLET_NO_GREENDNS', 'yes')

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
