"""``cellplane-scheduler`` refuses to start without what it needs, and says what that is.

(Scheduling through the daemon is tested in test_top_boot_path.py.)
"""
from __future__ import annotations

import pytest

from cellplane.db import engines, migrate

API = {'connection': 'sqlite:///{tmp}/api.sqlite'}
PLACEMENT = {'endpoint_url': 'http://127.0.0.1:9', 'connect_attempts': 1}
BUS = {'transport_url': 'kombu+memory:////'}


@pytest.mark.parametrize('sections, code, says', [
    ({'DEFAULT': BUS, 'placement': PLACEMENT}, 2, '[api_database] connection'),
    ({'DEFAULT': BUS, 'api_database': API}, 2, '[placement] endpoint_url'),
    ({'api_database': API, 'placement': PLACEMENT}, 2, '[DEFAULT] transport_url'),
    ({'DEFAULT': BUS, 'placement': PLACEMENT, 'filter_scheduler': {
        'enabled_filters': 'NoSuchFilter'}, 'api_database': API}, 2, 'NoSuchFilter'),
    ({'DEFAULT': BUS, 'placement': PLACEMENT, 'api_database': API,
      'scheduler': {'record_backend': 'kafka'}}, 2, "record_backend = 'kafka'"),
    ({'DEFAULT': BUS, 'placement': PLACEMENT, 'api_database': API,
      'scheduler': {'record_backend': 'jsonlines'}}, 2, '[scheduler] records_file'),
    ({'DEFAULT': BUS, 'placement': PLACEMENT, 'api_database': {
        'connection': 'postgresql+psycopg2://nobody@127.0.0.1:1/none'}}, 1,
     'cannot read the cell mappings from the API database'),
])
def test_scheduler_without_what_it_needs_exits_with_a_message(daemons, tmp_path, sections,
                                                               code, says):
    sections = {name: {k: str(v).replace('{tmp}', str(tmp_path)) for k, v in opts.items()}
                for name, opts in sections.items()}
    exit_code, stderr = daemons.scheduler('scheduler', sections).run_to_exit()
    assert exit_code == code, stderr
    assert says in stderr


def test_scheduler_on_an_api_database_older_than_it_says_to_sync_it(daemons, tmp_path):
    """An API schema from before failure domains (a006): the levels cannot be recorded."""
    url = f'sqlite:///{tmp_path}/api.sqlite'
    engine = engines.create_engine(url)
    migrate.sync('api', engine, revision='a006')
    engine.dispose()
    exit_code, stderr = daemons.scheduler('scheduler', {
        'DEFAULT': BUS, 'placement': PLACEMENT, 'api_database': {'connection': url},
        'scheduler': {'failure_domain_levels': 'rack'}}).run_to_exit()
    assert exit_code == 1, stderr
    assert ('cellplane-scheduler: cannot record [scheduler] failure_domain_levels in the '
            'API database') in stderr
    assert '`cellplane-manage db sync --database api`' in stderr
