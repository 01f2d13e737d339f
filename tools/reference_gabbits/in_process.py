"""Our WSGI app in the runner's process, a fresh SQLite copy per YAML file.

Quick (seconds), for development; the legacy profile only: the app gets
that profile's options (the reference APIFixture's noauth2 and deprecated
policy defaults) set on Placement's option defaults, not from a file.
"""
from __future__ import annotations

import os
import shutil
import tempfile

from cellplane.db import engines, migrate
from placement import conf as placement_conf
from placement.client import InProcessTransport
from placement.objects import consumer as consumer_obj
from placement.objects import standards
from placement.wsgi import make_app

from . import profiles


def legacy_conf():
    """Placement's options as the legacy profile's config file sets them, with noauth2."""
    conf = placement_conf.defaults()
    conf.set_override('auth_strategy', 'noauth2', group='api')
    for group, options in profiles.sections('legacy').items():
        for name, value in options.items():
            conf.set_override(name, value, group=group)
    return conf


class InProcess:
    """Our WSGI app in this process, a fresh SQLite database per file."""

    def __init__(self):
        path = os.path.join(tempfile.mkdtemp(prefix='gabbi-template-'), 'placement.db')
        engine = engines.create_engine(f'sqlite:///{path}')
        migrate.sync('placement', engine)
        standards.sync(engine)
        engine.dispose()
        self._template = path
        self.app = None
        self._engine = None

    def gabbi_args(self) -> dict:
        return {'host': None, 'intercept': lambda: self}

    def __call__(self, environ, start_response):
        return self.app(environ, start_response)

    def begin_file(self):
        path = os.path.join(tempfile.mkdtemp(prefix='gabbi-'), 'placement.db')
        shutil.copy(self._template, path)
        self._engine = engines.create_engine(f'sqlite:///{path}')
        consumer_obj.forget_cached_names()
        self.app = make_app(self._engine, conf=legacy_conf(), sync_standards=False)
        return InProcessTransport(self.app)

    def end_file(self) -> None:
        self._engine.dispose()
