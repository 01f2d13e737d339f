"""GET /allocation_candidates: request/response cases.

The expected answers were checked against the reference implementation
(openstack-placement 16.0.0) on the same topology and queries.

Topology (``world`` fixture)::

    cn1  VCPU 8, MEMORY_MB 4096, HW_CPU_X86_AVX2, aggregate A
     +- numa0  VCPU 4, MEMORY_MB 2048, CUSTOM_NUMA
     |   +- pf1  SRIOV_NET_VF 8, CUSTOM_PHYSNET_A
     +- numa1  VCPU 4, MEMORY_MB 2048
         +- pf2  SRIOV_NET_VF 8, CUSTOM_PHYSNET_B
    cn2  VCPU 8 (6 used), MEMORY_MB 4096, aggregate A
    cn3  VCPU 16 x2.0, MEMORY_MB 8192, DISK_GB 500, HW_CPU_X86_SSE, aggregate B
    ss   DISK_GB 1000 (950 used), MISC_SHARES_VIA_AGGREGATE, aggregate A
"""
from __future__ import annotations

import pytest

AGG_A = '60a06521-8650-5341-9d4b-cb929eeabb65'
AGG_B = '5be22378-a8b8-5499-a1bd-cf92f89b494e'


class World(dict):
    """name -> uuid, plus the api."""

    def __init__(self, api):
        super().__init__()
        self.api = api

    def candidates(self, query: str, mv: str = '1.39'):
        result = self.api.get(f'/allocation_candidates?{query}', mv=mv)
        assert result.status == 200, result.text
        return result.json

    def names(self, body) -> list[list[str]]:
        """Each allocation request as the sorted names of its providers."""
        by_uuid = {v: k for k, v in self.items()}
        out = []
        for ar in body['allocation_requests']:
            allocs = ar['allocations']
            uuids = ([a['resource_provider']['uuid'] for a in allocs]
                     if isinstance(allocs, list) else list(allocs))
            out.append(sorted(by_uuid[u] for u in uuids))
        return sorted(out)

    def summary_names(self, body) -> set[str]:
        by_uuid = {v: k for k, v in self.items()}
        return {by_uuid[u] for u in body['provider_summaries']}


@pytest.fixture
def world(api):
    w = World(api)
    w['cn1'] = api.provider('cn1', inventory={'VCPU': 8, 'MEMORY_MB': 4096},
                            traits=['HW_CPU_X86_AVX2'], aggregates=[AGG_A])
    w['numa0'] = api.provider('numa0', inventory={'VCPU': 4, 'MEMORY_MB': 2048},
                              traits=['CUSTOM_NUMA'], parent=w['cn1'])
    w['numa1'] = api.provider('numa1', inventory={'VCPU': 4, 'MEMORY_MB': 2048},
                              parent=w['cn1'])
    w['pf1'] = api.provider('pf1', inventory={'SRIOV_NET_VF': 8},
                            traits=['CUSTOM_PHYSNET_A'], parent=w['numa0'])
    w['pf2'] = api.provider('pf2', inventory={'SRIOV_NET_VF': 8},
                            traits=['CUSTOM_PHYSNET_B'], parent=w['numa1'])
    w['cn2'] = api.provider('cn2', inventory={'VCPU': 8, 'MEMORY_MB': 4096},
                            aggregates=[AGG_A])
    w['cn3'] = api.provider('cn3', inventory={
        'VCPU': {'total': 16, 'allocation_ratio': 2.0}, 'MEMORY_MB': 8192,
        'DISK_GB': 500}, traits=['HW_CPU_X86_SSE'], aggregates=[AGG_B])
    w['ss'] = api.provider('ss', inventory={'DISK_GB': 1000},
                           traits=['MISC_SHARES_VIA_AGGREGATE'], aggregates=[AGG_A])
    assert api.claim('c2c2c2c2-0000-4000-8000-000000000001',
                     {w['cn2']: {'VCPU': 6}, w['ss']: {'DISK_GB': 950}}).status == 204
    return w


@pytest.fixture
def flat(api):
    """Three plain compute nodes: the flat (single query) path."""
    w = World(api)
    w['h1'] = api.provider('h1', inventory={'VCPU': 4, 'MEMORY_MB': 1024},
                           traits=['HW_CPU_X86_AVX2'], aggregates=[AGG_A])
    w['h2'] = api.provider('h2', inventory={'VCPU': 4, 'MEMORY_MB': 1024},
                           aggregates=[AGG_B])
    w['h3'] = api.provider('h3', inventory={'VCPU': 1, 'MEMORY_MB': 4096})
    return w


# ------------------------------------------------------------ flat hosts

def test_flat_each_host_that_fits_is_one_candidate(flat):
    body = flat.candidates('resources=VCPU:2,MEMORY_MB:512')
    assert flat.names(body) == [['h1'], ['h2']]
    ar = next(a for a in body['allocation_requests'] if flat['h1'] in a['allocations'])
    assert ar == {'allocations': {flat['h1']: {'resources': {'VCPU': 2, 'MEMORY_MB': 512}}},
                  'mappings': {'': [flat['h1']]}}
    assert body['provider_summaries'][flat['h1']] == {
        'resources': {'VCPU': {'capacity': 4, 'used': 0},
                      'MEMORY_MB': {'capacity': 1024, 'used': 0}},
        'traits': ['HW_CPU_X86_AVX2'],
        'parent_provider_uuid': None, 'root_provider_uuid': flat['h1']}


def test_flat_usage_is_subtracted(flat):
    assert flat.api.claim('c1c1c1c1-0000-4000-8000-000000000001',
                          {flat['h1']: {'VCPU': 3}}).status == 204
    body = flat.candidates('resources=VCPU:2')
    assert flat.names(body) == [['h2']]
    body = flat.candidates('resources=VCPU:1')
    assert body['provider_summaries'][flat['h1']]['resources']['VCPU'] == {
        'capacity': 4, 'used': 3}


def test_flat_traits_and_aggregates(flat):
    assert flat.names(flat.candidates('resources=VCPU:1&required=HW_CPU_X86_AVX2')) == [['h1']]
    assert flat.names(flat.candidates('resources=VCPU:1&required=!HW_CPU_X86_AVX2')) == [
        ['h2'], ['h3']]
    assert flat.names(flat.candidates(f'resources=VCPU:1&member_of={AGG_B}')) == [['h2']]
    assert flat.names(flat.candidates(
        f'resources=VCPU:1&member_of=in:{AGG_A},{AGG_B}')) == [['h1'], ['h2']]
    assert flat.names(flat.candidates(f'resources=VCPU:1&member_of=!{AGG_A}')) == [
        ['h2'], ['h3']]
    assert flat.names(flat.candidates(
        'resources=VCPU:1&required=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE')) == [['h1']]


def test_flat_custom_trait_made_again_is_found_under_its_new_id(flat):
    # A standard trait's id lasts as long as the database; a custom one may
    # be deleted and made again under a new id, and must then be read anew
    # (a guard for any cache of trait ids).
    api = flat.api

    def set_traits(rp, traits):
        generation = api.get(f'/resource_providers/{rp}').json['generation']
        assert api.put(f'/resource_providers/{rp}/traits', {
            'resource_provider_generation': generation, 'traits': traits}).status == 200

    flat['h4'] = api.provider('h4', inventory={'VCPU': 4}, traits=['CUSTOM_GOLD'])
    body = flat.candidates('resources=VCPU:1&required=CUSTOM_GOLD')
    assert flat.names(body) == [['h4']]
    assert body['provider_summaries'][flat['h4']]['traits'] == ['CUSTOM_GOLD']
    set_traits(flat['h4'], [])
    assert api.delete('/traits/CUSTOM_GOLD').status == 204
    assert api.put('/traits/CUSTOM_GOLD').status == 201
    set_traits(flat['h2'], ['CUSTOM_GOLD'])
    body = flat.candidates('resources=VCPU:1&required=CUSTOM_GOLD')
    assert flat.names(body) == [['h2']]
    assert body['provider_summaries'][flat['h2']]['traits'] == ['CUSTOM_GOLD']


def test_flat_member_of_any_and_every_aggregate(api):
    w = World(api)
    w['both'] = api.provider('both', inventory={'VCPU': 4}, aggregates=[AGG_A, AGG_B])
    w['a'] = api.provider('a', inventory={'VCPU': 4}, aggregates=[AGG_A])
    w['b'] = api.provider('b', inventory={'VCPU': 4}, aggregates=[AGG_B])
    # any of A, B: a provider in both is still one candidate
    body = w.candidates(f'resources=VCPU:1&member_of=in:{AGG_A},{AGG_B}')
    assert w.names(body) == [['a'], ['b'], ['both']]
    # A and B: only the provider in both
    body = w.candidates(f'resources=VCPU:1&member_of={AGG_A}&member_of={AGG_B}')
    assert w.names(body) == [['both']]
    body = w.candidates(f'resources=VCPU:1&member_of=in:{AGG_A},{AGG_B}&member_of={AGG_B}')
    assert w.names(body) == [['b'], ['both']]


def test_flat_limit_and_its_summaries(flat):
    body = flat.candidates('resources=VCPU:1&limit=2')
    assert len(body['allocation_requests']) == 2
    listed = {u for ar in body['allocation_requests'] for u in ar['allocations']}
    assert set(body['provider_summaries']) == listed


def test_flat_formats_of_old_microversions(flat):
    body = flat.candidates('resources=VCPU:1,MEMORY_MB:2048', mv='1.10')
    assert body['allocation_requests'] == [{'allocations': [
        {'resource_provider': {'uuid': flat['h3']},
         'resources': {'VCPU': 1, 'MEMORY_MB': 2048}}]}]
    assert body['provider_summaries'] == {flat['h3']: {'resources': {
        'VCPU': {'capacity': 1, 'used': 0}, 'MEMORY_MB': {'capacity': 4096, 'used': 0}}}}
    # Before 1.27 only the requested classes are summarised.
    body = flat.candidates('resources=VCPU:1', mv='1.26')
    assert set(body['provider_summaries'][flat['h3']]['resources']) == {'VCPU'}
    assert 'traits' in body['provider_summaries'][flat['h3']]
    assert 'mappings' not in body['allocation_requests'][0]


def test_no_room_is_an_empty_answer(flat):
    assert flat.candidates('resources=VCPU:5') == {
        'allocation_requests': [], 'provider_summaries': {}}


# --------------------------------------------------- nested and sharing

def test_nested_spreads_over_the_tree(world):
    body = world.candidates('resources=VCPU:2,SRIOV_NET_VF:1')
    assert world.names(body) == [
        ['cn1', 'pf1'], ['cn1', 'pf2'], ['numa0', 'pf1'], ['numa0', 'pf2'],
        ['numa1', 'pf1'], ['numa1', 'pf2']]
    # Summaries cover the whole tree, with parents and roots.
    assert world.summary_names(body) == {'cn1', 'numa0', 'numa1', 'pf1', 'pf2'}
    pf1 = body['provider_summaries'][world['pf1']]
    assert (pf1['parent_provider_uuid'], pf1['root_provider_uuid']) == (
        world['numa0'], world['cn1'])


def test_nested_results_are_hidden_before_1_29(world):
    body = world.candidates('resources=VCPU:2,SRIOV_NET_VF:1', mv='1.28')
    assert body == {'allocation_requests': [], 'provider_summaries': {}}


def test_sharing_provider_completes_hosts_in_its_aggregate(world):
    body = world.candidates('resources=VCPU:1,DISK_GB:10')
    assert world.names(body) == [
        ['cn1', 'ss'], ['cn2', 'ss'], ['cn3'], ['numa0', 'ss'], ['numa1', 'ss']]
    # ss has only 50 GB left: 100 comes from cn3 alone.
    assert world.names(world.candidates('resources=VCPU:1,DISK_GB:100')) == [['cn3']]


def test_sharing_provider_alone(world):
    assert world.names(world.candidates('resources=DISK_GB:10')) == [['cn3'], ['ss']]


def test_required_trait_of_the_unnamed_group_on_a_used_provider(world):
    assert world.names(world.candidates('resources=VCPU:1&required=CUSTOM_NUMA')) == [
        ['numa0']]
    assert world.names(world.candidates('resources=VCPU:1&required=!CUSTOM_NUMA')) == [
        ['cn1'], ['cn2'], ['cn3'], ['numa1']]


def test_member_of_matches_provider_or_its_root(world):
    assert world.names(world.candidates(f'resources=VCPU:1&member_of={AGG_A}')) == [
        ['cn1'], ['cn2'], ['numa0'], ['numa1']]
    assert world.names(world.candidates(f'resources=VCPU:1&member_of=!{AGG_A}')) == [
        ['cn3']]


def test_in_tree(world):
    names = world.names(world.candidates(f'resources=VCPU:1&in_tree={world["numa0"]}'))
    assert names == [['cn1'], ['numa0'], ['numa1']]
    # in_tree keeps sharing providers of other trees out.
    assert world.names(world.candidates(
        f'resources=VCPU:1,DISK_GB:10&in_tree={world["cn2"]}')) == []


def test_root_required(world):
    assert world.names(world.candidates(
        'resources=VCPU:1&root_required=HW_CPU_X86_AVX2')) == [['cn1'], ['numa0'], ['numa1']]
    assert world.names(world.candidates(
        'resources=VCPU:1&root_required=!HW_CPU_X86_AVX2')) == [['cn2'], ['cn3']]


# -------------------------------------------------------- granular groups

def test_granular_isolate_uses_different_providers(world):
    body = world.candidates('resources1=SRIOV_NET_VF:1&required1=CUSTOM_PHYSNET_A'
                            '&resources2=SRIOV_NET_VF:1&required2=CUSTOM_PHYSNET_B'
                            '&group_policy=isolate')
    assert world.names(body) == [['pf1', 'pf2']]
    mappings = body['allocation_requests'][0]['mappings']
    assert mappings == {'1': [world['pf1']], '2': [world['pf2']]}


def test_granular_none_may_share_a_provider(world):
    none = world.candidates('resources1=VCPU:1&resources2=VCPU:1&group_policy=none')
    isolate = world.candidates('resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate')
    assert len(none['allocation_requests']) == 11
    assert len(isolate['allocation_requests']) == 6
    same = [ar for ar in none['allocation_requests'] if len(ar['allocations']) == 1]
    assert all(list(ar['allocations'].values())[0]['resources'] == {'VCPU': 2}
               for ar in same)


def test_group_policy_required_with_two_granular_groups(world):
    result = world.api.get('/allocation_candidates?resources1=VCPU:1&resources2=VCPU:1')
    assert result.status == 400
    assert 'The "group_policy" parameter is required' in result.error['detail']


def test_same_subtree_with_a_resourceless_group(world):
    body = world.candidates('required_NUMA=CUSTOM_NUMA&resources_V=VCPU:1'
                            '&resources_N=SRIOV_NET_VF:1&same_subtree=_NUMA,_V,_N'
                            '&group_policy=none')
    # One provider among those of the groups must be an ancestor of the
    # others: cn1 is, for either PF; numa0 is, for pf1 only.
    by_uuid = {v: k for k, v in world.items()}
    found = sorted(
        (by_uuid[ar['mappings']['_V'][0]], by_uuid[ar['mappings']['_N'][0]])
        for ar in body['allocation_requests'])
    assert found == [('cn1', 'pf1'), ('cn1', 'pf2'), ('numa0', 'pf1')]
    for ar in body['allocation_requests']:
        # A resourceless group is mapped but allocates nothing.
        assert ar['mappings']['_NUMA'] == [world['numa0']]
        assert world['numa0'] not in ar['allocations'] or \
            ar['mappings']['_V'] == [world['numa0']]


def test_string_suffixes_from_1_33(world):
    assert world.api.get('/allocation_candidates?resources_X=VCPU:1', mv='1.33').status == 200
    assert world.api.get('/allocation_candidates?resources_X=VCPU:1', mv='1.32').status == 400


# -------------------------------------------------------------- bad input

@pytest.mark.parametrize('query, mv, words', [
    ('resources=COWS:1', '1.39',
     'Invalid resource class in resources parameter: No such resource class COWS'),
    ('resources=VCPU:1&required=CUSTOM_NOPE', '1.39', 'No such trait(s): CUSTOM_NOPE'),
    ('resources=VCPU:0', '1.39', 'Requested resource VCPU requires amount >= 1'),
    ('resources=VCPU:x', '1.39', 'expected positive integer amount'),
    ('resources=VCPU', '1.39', 'Badly formed resources parameter'),
    ('required=CUSTOM_NUMA', '1.39', 'There must be at least one resources'),
    ('resources=VCPU:1&required=A,!A', '1.39', 'Conflicting required and forbidden'),
    ('resources=VCPU:1&member_of=not-a-uuid', '1.39', "Expected 'member_of'"),
    ('resources=VCPU:1&in_tree=not-a-uuid', '1.39', "Expected 'in_tree'"),
    ('resources=VCPU:1&limit=0', '1.39', 'Invalid query string parameters'),
    ('resources=VCPU:1&group_policy=some', '1.39', 'Invalid query string parameters'),
    ('resources=VCPU:1&limit=1', '1.15', "'limit' was unexpected"),
    ('resources=VCPU:1&same_subtree=_X', '1.39', 'Real suffixes should be specified'),
])
def test_bad_queries_are_400(flat, query, mv, words):
    result = flat.api.get(f'/allocation_candidates?{query}', mv=mv)
    assert result.status == 400
    assert words in result.error['detail']


def test_root_required_twice_is_a_duplicate_key(flat):
    result = flat.api.get('/allocation_candidates?resources=VCPU:1'
                          '&root_required=A&root_required=B')
    assert result.status == 400
    assert result.error['code'] == 'placement.query.duplicate_key'


def test_absent_before_1_10(flat):
    assert flat.api.get('/allocation_candidates?resources=VCPU:1', mv='1.9').status == 404


# ------------------------------------------- member_of: the member search

def _random_hosts(api, seed: int, count: int = 24):
    """``count`` hosts with varied inventory, constraints, usage and traits,
    every one in aggregate A and every third in aggregate B."""
    import random
    rng = random.Random(seed)
    traits = ['HW_CPU_X86_AVX2', 'HW_CPU_X86_SSE', 'CUSTOM_GOLD']
    assert api.post('/resource_classes', {'name': 'CUSTOM_FPGA'}).status == 201
    hosts = World(api)
    for i in range(count):
        vcpu = {'total': rng.choice([2, 4, 8]), 'reserved': rng.choice([0, 1]),
                'allocation_ratio': rng.choice([1.0, 1.5, 4.0])}
        inventory = {
            'VCPU': vcpu,
            'MEMORY_MB': {'total': 4096, 'min_unit': rng.choice([1, 512]),
                          'max_unit': rng.choice([2048, 4096]),
                          'step_size': rng.choice([1, 256])},
        }
        if i % 4 == 0:
            inventory['CUSTOM_FPGA'] = 2
        chosen = [t for t in traits if rng.random() < 0.5]
        aggregates = [AGG_A] + ([AGG_B] if i % 3 == 0 else [])
        name = f'r{i:02d}'
        hosts[name] = api.provider(name, inventory=inventory, traits=chosen,
                                   aggregates=aggregates)
        capacity = int((vcpu['total'] - vcpu['reserved']) * vcpu['allocation_ratio'])
        used = min(rng.choice([0, 1, 2, 4]), capacity)
        if used:
            assert api.claim(f'00000000-0000-4000-8000-{i:012d}',
                             {hosts[name]: {'VCPU': used}}).status == 204
    return hosts


_MEMBER_QUERIES = [
    'resources=VCPU:1',
    'resources=VCPU:2,MEMORY_MB:1024',
    'resources=VCPU:1,MEMORY_MB:300',            # step_size and min_unit
    'resources=MEMORY_MB:3000',                  # max_unit
    'resources=VCPU:3,CUSTOM_FPGA:1',
    'resources=VCPU:1&required=HW_CPU_X86_AVX2',
    'resources=VCPU:1&required=!HW_CPU_X86_SSE',
    'resources=VCPU:1&required=in:HW_CPU_X86_SSE,CUSTOM_GOLD',
    'resources=VCPU:1&required=HW_CPU_X86_AVX2,!CUSTOM_GOLD',
    f'resources=VCPU:1&member_of=!{AGG_B}',
]


@pytest.mark.parametrize('seed', [1, 2, 3])
def test_member_of_answers_as_the_search_over_every_host(api, seed):
    # Every host is in aggregate A, so member_of=A must answer exactly what
    # the same query without member_of answers, summaries included. The
    # two start from different providers (the aggregate's members, every
    # provider, or those with a required trait), and on SQLite they are
    # different queries.
    hosts = _random_hosts(api, seed)
    for query in _MEMBER_QUERIES:
        everywhere = hosts.candidates(query)
        members = hosts.candidates(f'{query}&member_of={AGG_A}')
        assert hosts.names(members) == hosts.names(everywhere), query
        assert members['provider_summaries'] == everywhere['provider_summaries'], query
        assert everywhere['allocation_requests'], f'{query} matched no host'


def test_member_of_limit_counts_only_fitting_members(api):
    # The limit must count candidates, not members looked at.
    hosts = _random_hosts(api, 7)
    fitting = hosts.names(hosts.candidates(f'resources=VCPU:2&member_of={AGG_A}'))
    assert len(fitting) > 6
    limited = hosts.candidates(f'resources=VCPU:2&member_of={AGG_A}&limit=6')
    assert len(limited['allocation_requests']) == 6
    assert set(map(tuple, hosts.names(limited))) <= set(map(tuple, fitting))
