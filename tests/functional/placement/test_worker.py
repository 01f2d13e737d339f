"""A daemon worker's app as placement.cmd builds it: from the configuration
files, serving, with the heap it was built on frozen out of the collector's
sight."""
from __future__ import annotations

import gc
import shutil

import webob

from placement import cmd
from tests.functional.placement.conftest import _migrated_template


def test_worker_app_serves_and_freezes_its_heap(tmp_path):
    db = tmp_path / 'placement.db'
    shutil.copy(_migrated_template(), db)
    conf = tmp_path / 'placement.conf'
    conf.write_text(f'[placement_database]\nconnection = sqlite:///{db}\n'
                    '[api]\nauth_strategy = noauth2\n')
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    app = None
    try:
        app = cmd.worker_app(['--config-file', str(conf)])
        assert gc.get_freeze_count() > 0
        req = webob.Request.blank('/resource_providers', headers={
            'x-auth-token': 'admin', 'accept': 'application/json'})
        resp = req.get_response(app)
        assert resp.status_int == 200
        assert resp.json == {'resource_providers': []}
    finally:
        gc.unfreeze()
        if app is not None:
            app.placement.engine.dispose()
