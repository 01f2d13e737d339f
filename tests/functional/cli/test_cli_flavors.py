"""``cellplane flavor ...`` keeps flavors in the API database and checks extra specs."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from cellplane_cli import cli, manage


@pytest.fixture
def top_conf(tmp_path):
    conf = tmp_path / 'top.conf'
    conf.write_text(f'[api_database]\nconnection = sqlite:///{tmp_path}/api.sqlite\n')
    assert manage.main(['db', 'sync', '--database', 'api', '--config-file', str(conf)]) == 0
    return str(conf)


def test_flavor_create_and_list_round_trip_extra_specs(top_conf, capsys):
    assert cli.main(['flavor', 'create', 'm1.small', '--vcpus', '2', '--ram', '2048',
                     '--disk', '20', '--property', 'resources:CUSTOM_GPU=1',
                     '--property', 'trait:HW_CPU_X86_AVX2=required',
                     '--config-file', top_conf]) == 0
    capsys.readouterr()
    assert cli.main(['flavor', 'list', '--config-file', top_conf, '-f', 'json']) == 0
    [flavor] = json.loads(capsys.readouterr().out)
    assert (flavor['name'], flavor['vcpus'], flavor['memory_mb'], flavor['root_gb']) == \
        ('m1.small', 2, 2048, 20)
    assert flavor['extra_specs'] == {'resources:CUSTOM_GPU': '1',
                                     'trait:HW_CPU_X86_AVX2': 'required'}


@pytest.mark.parametrize('prop, named', [
    ('resources:VCPUS=1', 'VCPUS'),
    ('resources:VCPU=two', 'whole number'),
    ('trait:NOT_A_TRAIT=required', 'NOT_A_TRAIT'),
    ('trait:CUSTOM_FAST=yes', 'required'),
])
def test_flavor_with_bad_scheduling_extra_spec_is_refused(top_conf, capsys, prop, named):
    assert cli.main(['flavor', 'create', 'bad', '--vcpus', '1', '--ram', '512',
                     '--property', prop, '--config-file', top_conf]) == 1
    assert named in capsys.readouterr().err
    capsys.readouterr()
    assert cli.main(['flavor', 'list', '--config-file', top_conf, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_flavor_delete_then_show_fails(top_conf, capsys):
    assert cli.main(['flavor', 'create', 'tiny', '--vcpus', '1', '--ram', '256',
                     '--config-file', top_conf]) == 0
    assert cli.main(['flavor', 'delete', 'tiny', '--config-file', top_conf]) == 0
    assert cli.main(['flavor', 'show', 'tiny', '--config-file', top_conf]) == 1
    assert 'tiny' in capsys.readouterr().err


@pytest.mark.parametrize('name, vcpus, says', [
    ('', '1', 'must not be empty or blank'),
    ('   ', '1', 'must not be empty or blank'),
    ('x' * 500, '1', 'at most 255 characters, not 500'),
])
def test_a_flavor_the_database_cannot_hold_is_refused_in_one_line(
        top_conf, capsys, name, vcpus, says):
    # A subprocess, as an operator runs it: the whole stderr is what they see.
    proc = subprocess.run(
        [sys.executable, '-m', 'cellplane_cli.cli', 'flavor', 'create', name,
         '--vcpus', vcpus, '--ram', '512', '--config-file', top_conf],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    err = proc.stderr
    assert says in err
    assert 'psycopg2' not in err and 'sqlalchemy' not in err.lower()
    assert len(err.strip().splitlines()) == 1
    assert cli.main(['flavor', 'list', '--config-file', top_conf, '-f', 'json']) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_a_taken_name_or_id_names_the_flavor_that_has_it(top_conf, capsys):
    assert cli.main(['flavor', 'create', 'small', '--vcpus', '1', '--ram', '512',
                     '--id', 'f-1', '--config-file', top_conf]) == 0
    capsys.readouterr()
    # The flavor that has the name, not the random id the new one would have had.
    assert cli.main(['flavor', 'create', 'small', '--vcpus', '2', '--ram', '1024',
                     '--config-file', top_conf]) == 1
    assert "a flavor named 'small' exists (id f-1)" in capsys.readouterr().err
    assert cli.main(['flavor', 'create', 'other', '--vcpus', '2', '--ram', '1024',
                     '--id', 'f-1', '--config-file', top_conf]) == 1
    assert "a flavor with id 'f-1' exists (named 'small')" in capsys.readouterr().err
