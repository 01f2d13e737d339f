"""``cellplane-api`` refuses a configuration it cannot serve: one line on stderr, exit status 2.

Run as a subprocess, as an operator (or systemd, which does not restart on 2) would.
"""
from __future__ import annotations

import subprocess
import sys

import pytest


def _run(tmp_path, text: str) -> subprocess.CompletedProcess:
    conf = tmp_path / 'api.conf'
    conf.write_text(text)
    return subprocess.run([sys.executable, '-m', 'cellplane_api.cmd', '--config-file', str(conf)],
                          capture_output=True, text=True, timeout=120)


# All that is needed but the option at fault.
_SERVABLE = ('[api_database]\nconnection = sqlite://\n[api]\nauth_strategy = noauth2\n'
             '[placement]\nendpoint_url = http://127.0.0.1:1\n')


@pytest.mark.parametrize('text, says', [
    ('[api]\nauth_strategy = noauth2\n', '[api_database] connection is not set'),
    ('[api_database]\nconnection = sqlite://\n',
     'is keystone, which needs [keystone_authtoken] www_authenticate_uri'),
    ('[api_database]\nconnection = sqlite://\n[api]\nauth_strategy = tokens\n',
     'auth_strategy'),
    ('[api_database]\nconnection = sqlite://\n[api]\nbind_port = 99999\n', 'bind_port'),
    ('[api_database]\nconnection = sqlite://\n[api]\nauth_strategy = noauth2\n',
     '[placement] endpoint_url (or auth_type and its Keystone options) is not set'),
    (_SERVABLE + '[image_catalog]\nimages_file = images-nowhere.yaml\n',
     '[image_catalog] images_file: the image catalog images-nowhere.yaml cannot be read'),
    (_SERVABLE + '[image_catalog]\nimages_file = /dev/null\n',
     'images_file: the image catalog /dev/null: '),
])
def test_a_configuration_it_cannot_serve_is_one_line_and_exit_2(tmp_path, text, says):
    proc = _run(tmp_path, text)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('cellplane-api: '), proc.stderr
    assert says in lines[0]
