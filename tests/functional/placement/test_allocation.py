"""/allocations over HTTP: request/response cases per microversion.

In-process app on a fresh SQLite database per test (see inprocess.py).
"""
from __future__ import annotations

import uuid

import pytest

from tests.functional.placement.inprocess import Api
from tests.support.deployment import free_port
from tests.support.tcp_proxy import TcpProxy

CONSUMER = '599ffd2d-526a-4b2e-8683-f13ad25f9958'
OTHER = 'da78521f-bf7e-4e6e-9901-3f79bd94d55d'


@pytest.fixture
def rp(api):
    return api.provider('cn1', inventory={
        'VCPU': {'total': 8, 'allocation_ratio': 2.0},
        'MEMORY_MB': {'total': 4096, 'min_unit': 64, 'max_unit': 2048, 'step_size': 64},
        'DISK_GB': 100})


def _generation(api, rp):
    return api.get(f'/resource_providers/{rp}').json['generation']


# ----------------------------------------------------------------- reads

def test_get_allocations_of_unknown_consumer_is_empty(api):
    for mv in ('1.0', '1.27', '1.39'):
        result = api.get(f'/allocations/{CONSUMER}', mv=mv)
        assert result.status == 200
        assert result.json == {'allocations': {}}


def test_put_then_get_shows_everything_at_latest(api, rp):
    gen_before = _generation(api, rp)
    assert api.claim(CONSUMER, {rp: {'VCPU': 2, 'MEMORY_MB': 512}}).status == 204
    body = api.get(f'/allocations/{CONSUMER}').json
    assert body == {
        'allocations': {rp: {'generation': gen_before + 1,
                             'resources': {'VCPU': 2, 'MEMORY_MB': 512}}},
        'project_id': 'proj', 'user_id': 'user',
        'consumer_generation': 1, 'consumer_type': 'INSTANCE'}


def test_get_hides_newer_fields_at_older_microversions(api, rp):
    api.claim(CONSUMER, {rp: {'VCPU': 1}})
    assert set(api.get(f'/allocations/{CONSUMER}', mv='1.11').json) == {'allocations'}
    assert set(api.get(f'/allocations/{CONSUMER}', mv='1.12').json) == {
        'allocations', 'project_id', 'user_id'}
    assert 'consumer_generation' in api.get(f'/allocations/{CONSUMER}', mv='1.28').json
    assert 'consumer_type' not in api.get(f'/allocations/{CONSUMER}', mv='1.37').json


def test_last_modified_from_1_15(api, rp):
    api.claim(CONSUMER, {rp: {'VCPU': 1}})
    assert 'Last-Modified' not in api.get(f'/allocations/{CONSUMER}', mv='1.14').headers
    headers = api.get(f'/allocations/{CONSUMER}', mv='1.15').headers
    assert headers['Cache-Control'] == 'no-cache'
    assert headers['Last-Modified'].endswith('GMT')


def test_provider_allocations_by_consumer(api, rp):
    api.claim(CONSUMER, {rp: {'VCPU': 2}})
    api.claim(OTHER, {rp: {'DISK_GB': 10}})
    body = api.get(f'/resource_providers/{rp}/allocations').json
    assert body['resource_provider_generation'] == _generation(api, rp)
    assert body['allocations'] == {
        CONSUMER: {'resources': {'VCPU': 2}, 'consumer_generation': 1},
        OTHER: {'resources': {'DISK_GB': 10}, 'consumer_generation': 1}}
    old = api.get(f'/resource_providers/{rp}/allocations', mv='1.27').json
    assert old['allocations'][CONSUMER] == {'resources': {'VCPU': 2}}


def test_provider_allocations_of_unknown_provider_is_404(api):
    missing = 'cb8a3007-b93a-471f-9e1f-4d58355678bd'
    result = api.get(f'/resource_providers/{missing}/allocations')
    assert result.status == 404
    assert f'No resource provider with uuid {missing} found' in result.error['detail']


def test_get_collection_is_405(api):
    result = api.get('/allocations')
    assert result.status == 405
    assert result.headers['Allow'] == 'POST'


# ------------------------------------------------------ body formats

def test_list_format_before_1_12(api, rp):
    body = {'allocations': [{'resource_provider': {'uuid': rp},
                             'resources': {'VCPU': 1, 'DISK_GB': 5}}]}
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.0').status == 204
    got = api.get(f'/allocations/{CONSUMER}', mv='1.0').json
    assert got['allocations'][rp]['resources'] == {'VCPU': 1, 'DISK_GB': 5}
    # Before 1.8 project and user are optional and filed as "incomplete".
    got = api.get(f'/allocations/{CONSUMER}', mv='1.12').json
    assert got['project_id'] == '00000000-0000-0000-0000-000000000000'


def test_project_and_user_required_from_1_8(api, rp):
    body = {'allocations': [{'resource_provider': {'uuid': rp},
                             'resources': {'VCPU': 1}}]}
    result = api.put(f'/allocations/{CONSUMER}', body, mv='1.8')
    assert result.status == 400
    assert "'project_id' is a required property" in result.error['detail']


def test_dict_format_is_refused_before_1_12(api, rp):
    body = {'allocations': {rp: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u'}
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.11').status == 400
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.12').status == 204


def test_consumer_type_required_from_1_38(api, rp):
    body = {'allocations': {rp: {'resources': {'VCPU': 1}}},
            'project_id': 'p', 'user_id': 'u', 'consumer_generation': None}
    result = api.put(f'/allocations/{CONSUMER}', body, mv='1.38')
    assert result.status == 400
    assert "'consumer_type' is a required property" in result.error['detail']
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.37').status == 204
    # A consumer written without a type shows as "unknown".
    assert api.get(f'/allocations/{CONSUMER}').json['consumer_type'] == 'unknown'


def test_malformed_consumer_type_is_400(api, rp):
    body = {'allocations': {rp: {'resources': {'VCPU': 1}}}, 'project_id': 'p',
            'user_id': 'u', 'consumer_generation': None, 'consumer_type': 'instance'}
    result = api.put(f'/allocations/{CONSUMER}', body)
    assert result.status == 400
    assert "'instance' does not match '^[A-Z0-9_]+$'" in result.error['detail']


# -------------------------------------------------- consumer generations

def test_new_consumer_needs_null_generation(api, rp):
    result = api.claim(CONSUMER, {rp: {'VCPU': 1}}, generation=5)
    assert result.status == 409
    assert result.error['code'] == 'placement.concurrent_update'
    assert 'consumer generation conflict - expected null but got 5' in result.error['detail']


def test_existing_consumer_needs_its_generation(api, rp):
    assert api.claim(CONSUMER, {rp: {'VCPU': 1}}).status == 204
    stale = api.claim(CONSUMER, {rp: {'VCPU': 2}}, generation=None)
    assert stale.status == 409
    assert stale.error['code'] == 'placement.concurrent_update'
    wrong = api.claim(CONSUMER, {rp: {'VCPU': 2}}, generation=3)
    assert 'expected 1 but got 3' in wrong.error['detail']
    assert api.claim(CONSUMER, {rp: {'VCPU': 2}}, generation=1).status == 204
    assert api.get(f'/allocations/{CONSUMER}').json['consumer_generation'] == 2


def test_generation_is_not_checked_before_1_28(api, rp):
    assert api.claim(CONSUMER, {rp: {'VCPU': 1}}).status == 204
    body = {'allocations': {rp: {'resources': {'VCPU': 3}}},
            'project_id': 'p', 'user_id': 'u'}
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.27').status == 204
    got = api.get(f'/allocations/{CONSUMER}').json
    assert got['allocations'][rp]['resources'] == {'VCPU': 3}
    assert got['project_id'] == 'p'   # the consumer follows the new owner
    assert got['consumer_generation'] == 2


def test_empty_allocations_remove_them_from_1_28(api, rp):
    api.claim(CONSUMER, {rp: {'VCPU': 1}})
    gen = _generation(api, rp)
    body = {'allocations': {}, 'project_id': 'proj', 'user_id': 'user',
            'consumer_generation': 1, 'consumer_type': 'INSTANCE'}
    assert api.put(f'/allocations/{CONSUMER}', body).status == 204
    assert api.get(f'/allocations/{CONSUMER}').json == {'allocations': {}}
    # The provider the allocations left is bumped, as in the reference.
    assert _generation(api, rp) == gen + 1
    # The consumer is gone: a new claim starts again from null.
    assert api.claim(CONSUMER, {rp: {'VCPU': 1}}, generation=None).status == 204


def test_empty_allocations_refused_before_1_28(api, rp):
    body = {'allocations': {}, 'project_id': 'p', 'user_id': 'u'}
    assert api.put(f'/allocations/{CONSUMER}', body, mv='1.27').status == 400


# ------------------------------------------------------ capacity checks

def test_capacity_counts_allocation_ratio(api, rp):
    assert api.claim(CONSUMER, {rp: {'VCPU': 16}}).status == 204    # 8 x 2.0
    result = api.claim(OTHER, {rp: {'VCPU': 1}})
    assert result.status == 409
    assert ("Unable to allocate inventory: Unable to create allocation for 'VCPU' "
            f"on resource provider '{rp}'. The requested amount would exceed the "
            "capacity.") in result.error['detail']
    assert result.error['code'] == 'placement.undefined_code'


def test_replacing_own_allocation_does_not_count_it_twice(api, rp):
    assert api.claim(CONSUMER, {rp: {'DISK_GB': 60}}).status == 204
    assert api.claim(CONSUMER, {rp: {'DISK_GB': 100}}, generation=1).status == 204
    usages = api.get(f'/resource_providers/{rp}/usages').json['usages']
    assert usages['DISK_GB'] == 100


@pytest.mark.parametrize('amount', [32, 4000, 100])
def test_min_max_step_are_enforced(api, rp, amount):
    # MEMORY_MB: min_unit 64, max_unit 2048, step_size 64
    result = api.claim(CONSUMER, {rp: {'MEMORY_MB': amount}})
    assert result.status == 409
    assert 'The requested amount would violate inventory constraints' in result.error['detail']


def test_class_without_inventory_on_provider_is_409(api, rp):
    result = api.claim(CONSUMER, {rp: {'PCI_DEVICE': 1}})
    assert result.status == 409
    assert f"Inventory for 'PCI_DEVICE' on resource provider '{rp}' invalid" in \
        result.error['detail']


def test_unknown_resource_class_is_400(api, rp):
    result = api.claim(CONSUMER, {rp: {'COWS': 1}})
    assert result.status == 400
    assert f'Unable to allocate inventory for consumer {CONSUMER}: ' \
           'No such resource class COWS' in result.error['detail']


def test_unknown_provider_is_400(api, rp):
    missing = 'be8b9cba-e7db-4a12-a386-99b4242167fe'
    result = api.claim(CONSUMER, {rp: {'VCPU': 1}, missing: {'VCPU': 1}})
    assert result.status == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in \
        result.error['detail']
    assert api.get(f'/allocations/{CONSUMER}').json == {'allocations': {}}


def test_refused_claim_changes_nothing(api, rp):
    gen = _generation(api, rp)
    result = api.claim(CONSUMER, {rp: {'VCPU': 1, 'DISK_GB': 1000}})
    assert result.status == 409
    assert _generation(api, rp) == gen
    assert api.get(f'/resource_providers/{rp}/allocations').json['allocations'] == {}


# ------------------------------------------------------------- bad input

@pytest.mark.parametrize('raw, content_type, status, words', [
    (b'{"allocations": ', 'application/json', 400, 'Malformed JSON'),
    (b'[1, 2]', 'application/json', 400, 'JSON does not validate'),
    (b'{}', 'text/plain', 415, 'The media type text/plain is not supported'),
])
def test_unreadable_bodies(api, rp, raw, content_type, status, words):
    result = api.put(f'/allocations/{CONSUMER}', raw=raw, content_type=content_type)
    assert result.status == status
    assert words in result.error['detail']


@pytest.mark.parametrize('resources', [
    {'VCPU': 0}, {'VCPU': -1}, {'VCPU': '1'}, {'VCPU': 1.5}, {'VCPU': 2.0}, {'VCPU': True},
    {}, {'vcpu': 1},
])
def test_bad_amounts_are_400(api, rp, resources):
    result = api.claim(CONSUMER, {rp: resources})
    assert result.status == 400
    assert 'JSON does not validate' in result.error['detail']


def test_numbers_too_big_to_store_are_400(api, rp):
    result = api.claim(CONSUMER, {rp: {'VCPU': 2 ** 31}})
    assert result.status == 400
    assert 'is greater than the maximum of 2147483647' in result.error['detail']
    assert api.claim(CONSUMER, {rp: {'VCPU': 1}}).status == 204
    result = api.claim(CONSUMER, {rp: {'VCPU': 1}}, generation=10 ** 20)
    assert result.status == 400


def test_bad_provider_uuid_in_body_is_400(api, rp):
    result = api.claim(CONSUMER, {'not-a-uuid': {'VCPU': 1}})
    assert result.status == 400


def test_bad_consumer_uuid_is_400(api, rp):
    result = api.claim('not-a-uuid', {rp: {'VCPU': 1}})
    assert result.status == 400
    assert 'Malformed consumer_uuid: not-a-uuid' in result.error['detail']


def test_consumer_uuid_without_dashes_is_normalised(api, rp):
    assert api.claim(CONSUMER.replace('-', ''), {rp: {'VCPU': 1}}).status == 204
    assert rp in api.get(f'/allocations/{CONSUMER}').json['allocations']


# ----------------------------------------------------------------- delete

def test_delete_removes_allocations_then_404(api, rp):
    api.claim(CONSUMER, {rp: {'VCPU': 1}})
    assert api.delete(f'/allocations/{CONSUMER}').status == 204
    assert api.get(f'/allocations/{CONSUMER}').json == {'allocations': {}}
    again = api.delete(f'/allocations/{CONSUMER}')
    assert again.status == 404
    assert f"No allocations for consumer '{CONSUMER}'" in again.error['detail']


# ------------------------------------------------------ POST /allocations

def test_post_is_404_before_1_13(api):
    assert api.post('/allocations', {}, mv='1.12').status == 404


def test_post_moves_a_consumer_atomically(api, rp):
    dest = api.provider('cn2', inventory={'VCPU': 4})
    api.claim(CONSUMER, {rp: {'VCPU': 2}})
    migration = str(uuid.uuid4())
    body = {
        CONSUMER: {'allocations': {dest: {'resources': {'VCPU': 2}}},
                   'project_id': 'proj', 'user_id': 'user',
                   'consumer_generation': 1, 'consumer_type': 'INSTANCE'},
        migration: {'allocations': {rp: {'resources': {'VCPU': 2}}},
                    'project_id': 'proj', 'user_id': 'user',
                    'consumer_generation': None, 'consumer_type': 'MIGRATION'},
    }
    assert api.post('/allocations', body).status == 204
    assert api.get(f'/allocations/{CONSUMER}').json['allocations'][dest]['resources'] == {'VCPU': 2}
    assert api.get(f'/allocations/{migration}').json['allocations'][rp]['resources'] == {'VCPU': 2}


def test_post_with_one_bad_consumer_writes_nothing(api, rp):
    dest = api.provider('cn2', inventory={'VCPU': 4})
    body = {
        CONSUMER: {'allocations': {dest: {'resources': {'VCPU': 2}}},
                   'project_id': 'proj', 'user_id': 'user',
                   'consumer_generation': None, 'consumer_type': 'INSTANCE'},
        OTHER: {'allocations': {dest: {'resources': {'VCPU': 3}}},
                'project_id': 'proj', 'user_id': 'user',
                'consumer_generation': None, 'consumer_type': 'INSTANCE'},
    }
    result = api.post('/allocations', body)
    assert result.status == 409
    assert 'exceed the capacity' in result.error['detail']
    assert api.get(f'/allocations/{CONSUMER}').json == {'allocations': {}}
    assert api.get(f'/allocations/{OTHER}').json == {'allocations': {}}


def test_post_counts_amounts_of_all_consumers_together(api, rp):
    # 100 DISK_GB: 60 + 60 in one request must not both fit.
    body = {c: {'allocations': {rp: {'resources': {'DISK_GB': 60}}},
                'project_id': 'p', 'user_id': 'u', 'consumer_generation': None,
                'consumer_type': 'INSTANCE'} for c in (CONSUMER, OTHER)}
    assert api.post('/allocations', body).status == 409


def test_post_mappings_are_accepted_and_ignored_from_1_34(api, rp):
    body = {CONSUMER: {'allocations': {rp: {'resources': {'VCPU': 1}}},
                       'mappings': {'': [rp]}, 'project_id': 'p', 'user_id': 'u',
                       'consumer_generation': None, 'consumer_type': 'INSTANCE'}}
    assert api.post('/allocations', body).status == 204
    body[OTHER] = body.pop(CONSUMER)
    assert api.post('/allocations', body, mv='1.33').status == 400


def test_postgresql_writes_in_one_server_side_call(api):
    from placement.objects import claim_function
    expected = api.engine.dialect.name == 'postgresql'
    assert claim_function.available(api.engine) is expected



# The one-call claim path exists on PostgreSQL only.
on_postgresql = pytest.mark.parametrize('api', ['postgresql'], indirect=True)


@on_postgresql
def test_postgresql_claim_leaves_the_pooled_connection_transactional(api, rp):
    # The claim switches the driver connection to autocommit for its one
    # statement; a success and a refusal must both switch it back, or the
    # next request on that connection would write outside a transaction.
    import sqlalchemy as sa

    from placement.db import api as db_api
    from placement.objects import allocation as alloc_obj
    write = alloc_obj.ConsumerWrite(CONSUMER, 'p', 'u', {rp: {'VCPU': 1}})
    refused = alloc_obj.ConsumerWrite(OTHER, 'p', 'u', {rp: {'VCPU': 1000}})
    resolved = alloc_obj.resolve_names(api.engine, [write, refused])
    with api.engine.connect() as conn:
        dbapi_conn = conn.connection.dbapi_connection
        db_api.execute_in_autocommit(conn, 'SELECT 1', ())
        assert dbapi_conn.autocommit is False
    alloc_obj._replace_in_database(api.engine, [write], resolved)
    with pytest.raises(alloc_obj.CapacityExceeded):
        alloc_obj._replace_in_database(api.engine, [refused], resolved)
    with api.engine.connect() as conn:
        assert conn.connection.dbapi_connection.autocommit is False
        conn.execute(sa.text("UPDATE consumers SET generation = 99"))
        conn.rollback()   # not committed: the update must disappear
    assert api.get(f'/allocations/{CONSUMER}').json['consumer_generation'] == 1


@on_postgresql
def test_postgresql_claim_reports_database_errors_as_sqlalchemy_errors(api):
    # The writer retries IntegrityError (two requests creating one consumer)
    # and deadlocks; the raw driver error must arrive in SQLAlchemy's types.
    from sqlalchemy import exc as sa_exc

    from placement.db import api as db_api
    with api.engine.connect() as conn:
        db_api.execute_in_autocommit(
            conn, "INSERT INTO traits (name) VALUES ('CUSTOM_TWICE')", ())
        with pytest.raises(sa_exc.IntegrityError) as caught:
            db_api.execute_in_autocommit(
                conn, "INSERT INTO traits (name) VALUES ('CUSTOM_TWICE')", ())
        assert caught.value.orig.pgcode == '23505'
        assert conn.connection.dbapi_connection.autocommit is False


@on_postgresql
def test_postgresql_claim_function_reuses_index_plans(api):
    # Its cached plans are made once per connection, possibly while the
    # tables are empty; with sequential scans off they are index plans that
    # stay right as the tables grow (migration c4e7a1d2f9b3), and every
    # call reuses them instead of planning again (migration d7a3f0b6c1e5).
    import sqlalchemy as sa
    with api.engine.connect() as conn:
        config = conn.execute(sa.text(
            "SELECT proconfig FROM pg_proc WHERE proname = 'placement_claim'")).scalar_one()
    assert sorted(config) == ['enable_seqscan=off', 'plan_cache_mode=force_generic_plan']


@on_postgresql
def test_warm_up_opens_the_pool_and_changes_nothing(api, rp):
    from placement.objects import claim_function
    assert api.claim(CONSUMER, {rp: {'VCPU': 1}}).status == 204
    before = api.get(f'/resource_providers/{rp}').json['generation']
    api.engine.dispose()
    claim_function.warm_up(api.engine, 3)
    assert api.engine.pool.checkedin() == 3
    assert api.get(f'/resource_providers/{rp}').json['generation'] == before
    assert api.get(f'/allocations/{CONSUMER}').json['allocations'][rp] == {
        'generation': before, 'resources': {'VCPU': 1}}


def test_a_worker_whose_warm_up_fails_still_serves_once_the_database_is_up(
        _postgres_engine, caplog):
    # The warm-up is a head start, not a condition: a database that is down
    # when a worker (re)starts must not keep the worker from serving later.
    from oslo_config import cfg

    from placement import conf as placement_conf
    from placement import wsgi
    database = _postgres_engine.url
    # A relay that nothing listens on until started: a database that comes up.
    relay = TcpProxy(database.host, database.port or 5432, port=free_port())
    conf = cfg.ConfigOpts()
    placement_conf.register_opts(conf)
    conf([], project='cellplane', default_config_files=[])
    conf.set_override('connection', database.set(host='127.0.0.1', port=relay.port)
                      .render_as_string(hide_password=False), group='placement_database')
    conf.set_override('auth_strategy', 'noauth2', group='api')
    try:
        # Nothing listens on the relay's port yet: every connection attempt is refused.
        app = wsgi.app_from_conf(conf, sync_standards=False)
        assert 'could not warm the database connections' in caplog.text
        relay.start()
        served = Api(app, None)
        provider = served.provider('warmed-later')
        assert served.get(f'/resource_providers/{provider}').json['name'] == 'warmed-later'
    finally:
        relay.stop()
