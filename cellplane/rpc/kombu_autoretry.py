"""kombu's ``Connection.autoretry`` without a new class per call.

oslo.messaging's rabbit driver wraps every broker operation in
``Connection.ensure``, which calls kombu's ``Connection.autoretry``: each
publish, and each wait on a queue (a listener's poll wakes about ten times
over the first half second after every message, then twice a second while
idle). kombu 5.x's ``autoretry`` defines a class, ``Revival``, inside the
function, so every call builds a new type object, which sits in reference
cycles until the cyclic garbage collector frees it: 32 µs a call here,
against 11.5 µs for an instance of one class. Counted in every daemon of
``move_bench.py --modes cold``, the calls come to about 29 per boot or move
over all daemons: some 0.6 ms of CPU less for each, besides the idle wakes.

``install()`` replaces the method with one that does the same with one
module-level class: the same ``ensure`` call with the same options, the same
callable handed to it (``__name__``, ``__module__`` and ``__doc__`` of the
wrapped function, ``revive(channel)``, the call returning ``(result,
channel)``), and the same first-call connection when no channel is given.
It installs only over the very method it was written from (the SHA-256 of
kombu 5.7.0's source of it, ``KNOWN_SOURCE``): another kombu keeps its own.
"""
from __future__ import annotations

from kombu import connection as kombu_connection

from cellplane.rpc import known_source

# sha256 of inspect.getsource(Connection.autoretry) in kombu 5.7.0.
KNOWN_SOURCE = '7f1d521dc88419193aaa8fd425ac62adc64cddceacbaaf77ea5c2d23849a5f79'
# What ``autoretry`` passes on to ``_ensure_connection`` when it connects
# first (kombu 5.x's list).
_CONNECT_OPTIONS = ('errback', 'max_retries', 'interval_start', 'interval_step',
                    'interval_max')

_original = kombu_connection.Connection.autoretry


class Revival:
    """The callable ``ensure`` retries: ``fun`` on the current channel, revived on reconnection."""

    def __init__(self, connection, fun, channel, ensure_options: dict) -> None:
        self.connection = connection
        self.fun = fun
        self.channel = channel
        self.ensure_options = ensure_options
        # Read by ensure to name the function it returns.
        self.__name__ = getattr(fun, '__name__', None)
        self.__module__ = getattr(fun, '__module__', None)
        self.__doc__ = getattr(fun, '__doc__', None)

    def revive(self, channel) -> None:
        self.channel = channel

    def __call__(self, *args, **kwargs):
        if self.channel is None:
            # The operation's retry policy applies before default_channel
            # would retry with the connection's transport options alone.
            conn_opts = self.connection._extract_failover_opts()
            conn_opts.update({key: self.ensure_options[key] for key in _CONNECT_OPTIONS
                              if key in self.ensure_options})
            self.connection._ensure_connection(**conn_opts)
            # default_channel reuses the connection just made.
            self.revive(self.connection.default_channel)
        return self.fun(*args, channel=self.channel, **kwargs), self.channel


def autoretry(self, fun, channel=None, **ensure_options):
    """kombu's ``Connection.autoretry``: ``fun`` wrapped by ``ensure`` with a channel it revives."""
    revive = Revival(self, fun, channel, ensure_options)
    return self.ensure(revive, revive, **ensure_options)


def installed() -> bool:
    return kombu_connection.Connection.autoretry is autoretry


def replaceable(method=None) -> bool:
    """Whether ``method`` (kombu's ``autoretry``) is the one this module does the same as."""
    return known_source.matches(_original if method is None else method, KNOWN_SOURCE)


def install() -> bool:
    """Replace ``Connection.autoretry`` (idempotent); False, kombu's kept, where it is another."""
    if not replaceable():
        return False
    kombu_connection.Connection.autoretry = autoretry
    return True
