"""Where a command finds its configuration without --config-file: $CELLPLANE_CONFIG, then /etc.

Run as subprocesses with their own environment, as an operator's shell runs them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

from cellplane_cli import manage


def _run(env_config: str | None, *argv: str):
    env = {k: v for k, v in os.environ.items() if k != 'CELLPLANE_CONFIG'}
    if env_config is not None:
        env['CELLPLANE_CONFIG'] = env_config
    return subprocess.run([sys.executable, '-m', 'cellplane_cli.cli', *argv],
                          capture_output=True, text=True, timeout=120, env=env)


def test_cellplane_config_names_the_file_when_no_config_file_is_given(tmp_path):
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = sqlite:///{tmp_path}/api.sqlite\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    assert _run(str(conf), 'flavor', 'create', 'small', '--vcpus', '1',
                '--ram', '512').returncode == 0
    listed = _run(str(conf), 'flavor', 'list', '-f', 'json')
    assert listed.returncode == 0, listed.stderr
    assert [f['name'] for f in json.loads(listed.stdout)] == ['small']
    # --config-file wins over the variable.
    other = tmp_path / 'other.conf'
    other.write_text(f'[api_database]\nconnection = sqlite:///{tmp_path}/other.sqlite\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(other)]) == 0
    listed = _run(str(conf), 'flavor', 'list', '-f', 'json', '--config-file', str(other))
    assert json.loads(listed.stdout) == []


def test_a_missing_file_named_by_the_variable_is_an_error_naming_it(tmp_path):
    proc = _run(str(tmp_path / 'nope.conf'), 'flavor', 'list')
    assert proc.returncode == 2
    assert f'config file not found: {tmp_path / "nope.conf"}' in proc.stderr


def test_without_any_config_the_error_says_where_it_looked(tmp_path):
    # On a machine without /etc/cellplane/cellplane.conf (as CI's).
    proc = _run(None, 'flavor', 'list')
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        '[api_database] connection is not set (no config file: give --config-file, set '
        'CELLPLANE_CONFIG, or create /etc/cellplane/cellplane.conf); this command reads '
        'the api database')


def test_db_sync_without_its_connection_names_the_option_it_was_given(tmp_path, capsys):
    conf = tmp_path / 'top.conf'
    conf.write_text('[DEFAULT]\n')
    assert manage.main(['db', 'sync', '--database', 'cell', '--config-file', str(conf)]) == 2
    assert (f'[database] connection is not set ({conf}); --database cell needs it'
            in capsys.readouterr().err)
