"""A bad option value in a file is one line: the option, the file, and what is wrong with it."""
from __future__ import annotations

import pytest
from oslo_config import cfg

from cellplane import config


@pytest.mark.parametrize('text, says', [
    ('[DEFAULT]\nrpc_handler_threads = lots\n',
     "invalid value for [DEFAULT] rpc_handler_threads (in {path}): invalid literal for "
     "int() with base 10: 'lots'"),
    ('[service]\nservice_down_time = -5\n',
     'invalid value for [service] service_down_time (in {path}): Should be greater than '
     'or equal to 1'),
])
def test_a_bad_value_names_option_and_file_without_oslo_config_internals(tmp_path, text,
                                                                         says):
    path = tmp_path / 'bad.conf'
    path.write_text(text)
    with pytest.raises(config.ConfigError) as err:
        config.load(['--config-file', str(path)], prog='test', conf=cfg.ConfigOpts(),
                    setup_logging=False)
    assert str(err.value) == says.format(path=path)
