"""A misspelled option in a known section is reported, naming the file and the closest option."""
from __future__ import annotations

import logging

from oslo_config import cfg

from cellplane import config
from scheduler import conf as scheduler_conf


def test_a_near_miss_is_warned_and_foreign_or_deprecated_options_are_not(tmp_path, caplog):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[scheduler]\nhost_refresh_interva = 5\n'
                    '[upgrade_levels]\nconductor = 1.0\n'           # a deprecated name
                    '[DEFAULT]\nsome_library_option = 1\n'          # nothing close
                    '[keystone_authtoken]\nauth_url = http://x\n')  # a section not ours
    caplog.set_level(logging.WARNING, logger='cellplane.config')
    conf = config.load(['--config-file', str(path)], prog='cellplane-scheduler',
                       registrars=[scheduler_conf.register_opts], conf=cfg.ConfigOpts(),
                       setup_logging=False)
    assert conf.scheduler.host_refresh_interval != 5   # ignored, hence the warning
    warnings = [r.getMessage() for r in caplog.records if r.name == 'cellplane.config']
    assert warnings == [
        f'{path}: [scheduler] host_refresh_interva is not an option of '
        f'cellplane-scheduler and is ignored; did you mean host_refresh_interval?']
