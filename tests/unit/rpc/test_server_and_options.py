"""Server plumbing: message shape checks, pool sizing, one transport per URL."""
from __future__ import annotations

import logging
import threading

import pytest
from oslo_config import cfg

from cellplane import conf as shared_conf
from cellplane.rpc import options as rpc_options
from cellplane.rpc.close_warning import BasicCancelOnCloseFilter
from cellplane.rpc.server import describe_malformed
from cellplane.rpc.transport import TransportCache, TransportURLError, get_transport, redact


@pytest.mark.parametrize('message, problem', [
    ({'args': {}}, 'names no method'),
    ({'method': '', 'args': {}}, 'names no method'),
    ({'method': 7}, 'names no method'),
    ({'method': 'ping', 'args': [1]}, "arguments of 'ping' are not a JSON object"),
    ({'method': 'ping', 'namespace': 3}, "namespace of 'ping' is not a string"),
    ({'method': 'ping', 'version': 1.0}, "version of 'ping' is not a string"),
])
def test_messages_without_an_rpc_shape_are_described(message, problem):
    assert problem in describe_malformed(message)


def test_a_well_formed_message_passes():
    assert describe_malformed({'method': 'ping', 'args': {}, 'namespace': 'diagnostics',
                               'version': '1.0'}) is None
    assert describe_malformed({'method': 'ping'}) is None


def _conf(tmp_path, text: str = '') -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    shared_conf.register_opts(conf)
    path = tmp_path / 'x.conf'
    path.write_text(text)
    conf(['--config-file', str(path)], default_config_files=[], default_config_dirs=[])
    return conf


def test_pools_follow_the_handler_threads(tmp_path):
    conf = _conf(tmp_path, '[DEFAULT]\nrpc_handler_threads = 64\n')
    assert rpc_options.size_pools(conf) == 64 + rpc_options.EXTRA_CONNECTIONS
    assert conf.executor_thread_pool_size == 64


def test_an_explicit_pool_size_in_a_file_wins(tmp_path):
    conf = _conf(tmp_path, '[DEFAULT]\nrpc_handler_threads = 64\n'
                           '[oslo_messaging_rabbit]\nrpc_conn_pool_size = 100\n')
    assert rpc_options.size_pools(conf) == 100


def test_the_librarys_default_transport_url_is_not_accepted(tmp_path):
    with pytest.raises(rpc_options.TransportNotConfigured, match=r'\[DEFAULT\] transport_url'):
        rpc_options.require_transport_url(_conf(tmp_path), 'cellplane-x')


def test_a_transport_url_from_the_file_is_returned(tmp_path):
    conf = _conf(tmp_path, '[DEFAULT]\ntransport_url = rabbit://u:p@h:5672/cell1\n')
    assert rpc_options.require_transport_url(conf, 'x') == 'rabbit://u:p@h:5672/cell1'


def test_concurrent_lookups_of_one_url_share_one_transport():
    cache = TransportCache()
    barrier = threading.Barrier(8)
    seen = []

    def lookup():
        barrier.wait()
        seen.append(cache.get('fake://'))

    threads = [threading.Thread(target=lookup) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert len(seen) == 8 and all(t is seen[0] for t in seen)
        assert len(cache) == 1
    finally:
        cache.cleanup()
    assert len(cache) == 0


def test_redacted_url_hides_the_password():
    assert redact('rabbit://guest:secret@10.0.0.1:5672/cell1') == (
        'rabbit://guest:***@10.0.0.1:5672/cell1')


@pytest.mark.parametrize('method, kept', [((60, 30), False), ((60, 31), True), ('x', True)])
def test_only_basic_cancel_during_close_is_dropped_from_amqp_warnings(method, kept):
    record = logging.LogRecord(
        'amqp', logging.WARNING, __file__, 1,
        'Received method %s during closing channel %s. This method will be ignored',
        (method, 1), None)
    assert BasicCancelOnCloseFilter().filter(record) is kept


def test_every_queue_is_a_quorum_queue_by_default(tmp_path):
    conf = _conf(tmp_path)
    rpc_options.register_opts(conf)
    rabbit = conf[rpc_options.RABBIT_GROUP]
    assert (rabbit.amqp_durable_queues, rabbit.rabbit_quorum_queue,
            rabbit.rabbit_transient_quorum_queue) == (True, True, True)


def test_a_daemon_names_its_stable_queues_by_its_host_and_role(tmp_path):
    conf = _conf(tmp_path, '[DEFAULT]\nhost = cell1-a\n'
                           '[oslo_messaging_rabbit]\nuse_queue_manager = true\n'
                           f'[oslo_concurrency]\nlock_path = {tmp_path}\n')
    rpc_options.name_queues(conf, 'cellplane-conductor-cell')
    rabbit = conf[rpc_options.RABBIT_GROUP]
    assert (rabbit.hostname, rabbit.processname) == ('cell1-a', 'cellplane-conductor-cell')
    assert rpc_options.queue_manager_allowed(conf)


def test_names_a_file_gives_win(tmp_path):
    conf = _conf(tmp_path, '[DEFAULT]\nhost = cell1-a\n[oslo_messaging_rabbit]\n'
                           'hostname = node7\nprocessname = agent\n')
    rpc_options.name_queues(conf, 'cellplane-compute')
    rabbit = conf[rpc_options.RABBIT_GROUP]
    assert (rabbit.hostname, rabbit.processname) == ('node7', 'agent')


def test_stable_queue_names_without_a_lock_path_are_refused(tmp_path):
    conf = _conf(tmp_path, '[oslo_messaging_rabbit]\nuse_queue_manager = true\n')
    with pytest.raises(rpc_options.TransportNotConfigured, match=r'lock_path'):
        rpc_options.name_queues(conf, 'cellplane-scheduler')


def test_a_process_that_did_not_name_itself_gets_random_queue_names(tmp_path):
    conf = _conf(tmp_path, '[oslo_messaging_rabbit]\nuse_queue_manager = true\n')
    rpc_options.register_opts(conf)
    assert not rpc_options.queue_manager_allowed(conf)
    get_transport('fake://', conf).cleanup()
    assert conf[rpc_options.RABBIT_GROUP].use_queue_manager is False


@pytest.mark.parametrize('options', [
    'rabbit_stream_fanout = true\nrabbit_qos_prefetch_count = 64\n'
    'rabbit_transient_quorum_queue = false\n',
    'rabbit_stream_fanout = true\n',
])
def test_stream_fanouts_without_what_they_need_are_refused_up_front(tmp_path, options):
    conf = _conf(tmp_path, f'[oslo_messaging_rabbit]\n{options}')
    with pytest.raises(TransportURLError, match='rabbit_stream_fanout needs'):
        get_transport('rabbit://u:p@127.0.0.1:1/cell1', conf)


@pytest.mark.parametrize('name', sorted(rpc_options.QUEUE_SETTINGS))
def test_each_named_queue_setting_is_a_set_of_real_options(tmp_path, name):
    conf = _conf(tmp_path)
    rpc_options.register_opts(conf)
    for option, value in rpc_options.QUEUE_SETTINGS[name].items():
        conf.set_override(option, value, group=rpc_options.RABBIT_GROUP)
