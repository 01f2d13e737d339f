"""RPC plumbing over oslo.messaging: transports, context, payload serializer, servers, clients.

``import oslo_messaging`` pulls in eventlet (through oslo.service), which
warns at import time that it is deprecated. cellplane never uses eventlet
(servers run oslo.messaging's threading executor), so that one warning is
filtered here, before any module of this package imports oslo.messaging;
every cellplane module imports oslo.messaging through this package.
"""
import warnings

warnings.filterwarnings('ignore', message=r'\s*Eventlet is deprecated')
