"""The embedded mode: the whole control plane in one process (``cellplane demo``).

``memory_transport`` is its message bus, ``runtime`` builds every service
from the same classes the daemons use, ``demo`` drives a boot scenario.
"""
