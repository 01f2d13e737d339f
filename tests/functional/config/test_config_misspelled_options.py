"""A misspelled option in a known section, or a misspelled section, is reported with the file and the closest name."""
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


def test_a_misspelled_section_is_warned_and_a_section_of_another_service_is_not(
        tmp_path, caplog):
    path = tmp_path / 'scheduler.conf'
    path.write_text('[schedular]\nhost_refresh_interval = 5\n'   # every option in it ignored
                    '[cells]\nread_timeout = 5\n'      # the API role's, close to [cell]
                    '[database]\nconnection = sqlite://\n'   # a cell's, close to api_database
                    '[oslo_messaging_kafka]\nx = 1\n'        # a library's
                    '[keystone_authtoken]\nauth_url = http://x\n')
    caplog.set_level(logging.WARNING, logger='cellplane.config')
    conf = config.load(['--config-file', str(path)], prog='cellplane-scheduler',
                       registrars=[scheduler_conf.register_opts], conf=cfg.ConfigOpts(),
                       setup_logging=False)
    assert conf.scheduler.host_refresh_interval != 5
    warnings = [r.getMessage() for r in caplog.records if r.name == 'cellplane.config']
    assert warnings == [
        f'{path}: [schedular] is not a section of cellplane-scheduler and is ignored; '
        f'did you mean [scheduler]?']
