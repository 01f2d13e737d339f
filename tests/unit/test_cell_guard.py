"""The cell guard refuses top-level options and database credentials, naming option and file."""
from __future__ import annotations

import pytest
from oslo_config import cfg

from cellplane import cell_guard, config


def _load(tmp_path, **files):
    paths = []
    for name, text in files.items():
        path = tmp_path / f'{name}.conf'
        path.write_text(text)
        paths += ['--config-file', str(path)]
    return config.load(paths, prog='test', conf=cfg.ConfigOpts(), setup_logging=False)


def test_cell_service_with_api_database_connection_is_refused_naming_option_and_file(tmp_path):
    conf = _load(tmp_path, cell1='[api_database]\nconnection = sqlite:///api\n')
    with pytest.raises(config.ConfigError) as err:
        cell_guard.refuse_top_level_options(conf, 'cell conductor')
    assert '[api_database] connection' in str(err.value)
    assert str(tmp_path / 'cell1.conf') in str(err.value)


def test_cell_service_given_a_top_level_file_is_refused_even_without_connection(tmp_path):
    conf = _load(tmp_path,
                 top='[DEFAULT]\ntransport_url = rabbit://h/top\n[api_database]\n',
                 cell1='[database]\nconnection = sqlite:///c1\n')
    with pytest.raises(config.ConfigError) as err:
        cell_guard.refuse_top_level_options(conf, 'cell conductor')
    assert str(tmp_path / 'top.conf') in str(err.value)


def test_cell_conductor_config_with_only_cell_options_is_accepted(tmp_path):
    conf = _load(tmp_path, cell1='[DEFAULT]\ntransport_url = rabbit://h/cell1\n'
                                 '[database]\nconnection = sqlite:///c1\n')
    # The guard is shown a cell's bus and database, not an empty config.
    assert conf.database.connection == 'sqlite:///c1'
    assert config.config_files(conf) == [str(tmp_path / 'cell1.conf')]
    # Accepted: it returns, raising nothing.
    assert cell_guard.refuse_top_level_options(conf, 'cell conductor') is None


def test_compute_agent_with_cell_database_connection_is_refused(tmp_path):
    conf = _load(tmp_path, compute='[database]\nconnection = sqlite:///c1\n')
    with pytest.raises(config.ConfigError) as err:
        cell_guard.refuse_database_credentials(conf, 'compute agent')
    assert '[database] connection' in str(err.value)
    assert str(tmp_path / 'compute.conf') in str(err.value)
