"""GroupPlaces: counting a group's members per domain, what Placement is asked, taking places."""
from __future__ import annotations

from cellplane.objects.server_group_places import Member
from rpc_schemas.request_spec import InstanceGroup
from scheduler.server_group.book import Survey
from scheduler.server_group.places import GroupPlaces

DOMAIN = {'h1': 'r1', 'h2': 'r1', 'h3': 'r2', 'h4': 'r3'}


class FakeBook:
    def __init__(self, members, gone=(), full=(), settled=None, waiting=()):
        self._members = members
        self._gone = set(gone)
        self.settled = dict(settled or {})   # member -> the host its cell says it runs on
        self.waiting = set(waiting)          # members not in a cell yet
        self.full = set(full)       # domains whose every slot another member holds
        self.held: dict[str, str] = {}
        self.released: list = []
        self.followed: list = []

    def members(self, group_uuid):
        return self._members

    def survey(self, uuids):
        return Survey(settled={u: h for u, h in self.settled.items() if u in uuids},
                      waiting=frozenset(u for u in uuids if u in self.waiting),
                      gone=frozenset(u for u in uuids if u in self._gone))

    def hold(self, instance_uuid, domain, max_per_domain):
        if domain in self.full:
            return False
        self.held[instance_uuid] = domain
        return True

    def follow(self, member, domain, max_per_domain):
        self.followed.append((member.instance_uuid, domain))
        return True

    def release(self, uuids):
        self.released.append(sorted(uuids))

    def release_stale(self, held):
        self.released.append(sorted(m.instance_uuid for m in held))

    def domain_names(self, level):
        return {'r1': 'rack-1', 'r2': 'rack-2', 'r3': 'rack-3'}


class FakeLocator:
    def __init__(self, hosts):
        self._hosts = hosts

    def hosts_of(self, uuids):
        return {u: self._hosts[u] for u in uuids if u in self._hosts}


def _group(policy='anti-affinity', **kw):
    return InstanceGroup(uuid='g', name='web', policy=policy, level='rack', **kw)


def _read(group, book, located, mine=('new',)):
    places = GroupPlaces.read(group, list(mine), book, FakeLocator(located),
                              lambda host, level: DOMAIN.get(host))
    places.tidy()
    return places


def test_members_count_where_their_allocation_is_else_where_their_place_is():
    book = FakeBook([Member('a', 'r3', 0), Member('b', 'r2', 0), Member('new', 'r1', 0)])
    places = _read(_group(), book, {'a': 'h1'})
    # a runs in r1 whatever its row says; b holds r2; the request's own
    # instance does not count.
    assert dict(places.counts) == {'r1': 1, 'r2': 1}
    assert places.full_domains() == ['r1', 'r2']
    assert places.others == ['a', 'b']
    # a's place follows it to where it runs.
    assert book.followed == [('a', 'r1')]


class AskedLocator(FakeLocator):
    """A locator that remembers whom it was asked about."""

    def __init__(self, hosts):
        super().__init__(hosts)
        self.asked: list[str] = []

    def hosts_of(self, uuids):
        self.asked += list(uuids)
        return super().hosts_of(uuids)


def test_placement_is_asked_only_of_members_the_survey_cannot_place():
    book = FakeBook([Member('settled', 'r3', 0), Member('waiting', 'r2', 0),
                     Member('waiting-no-place', None, None), Member('building', 'r3', 1)],
                    settled={'settled': 'h1'}, waiting=['waiting', 'waiting-no-place'])
    locator = AskedLocator({'settled': 'h4', 'waiting-no-place': 'h4', 'building': 'h3'})
    places = GroupPlaces.read(_group(), ['new'], book, locator,
                              lambda host, level: DOMAIN.get(host),
                              level_everywhere=lambda level: level == 'rack')
    # settled counts on its row's host (r1; Placement's h4 is not asked), waiting
    # in its place (r2); the one building is located in Placement (r2). The
    # waiting member with no place yet is being scheduled: under a hard policy,
    # every host being in a rack, its claim will hold a place or be given back
    # (the book decides between its scheduler and this one): it counts nowhere.
    assert locator.asked == ['building']
    assert dict(places.counts) == {'r1': 1, 'r2': 2}
    places.tidy()
    assert book.followed == [('settled', 'r1'), ('building', 'r2')]


def test_a_waiting_member_without_a_place_is_asked_of_placement_while_a_host_is_in_no_domain():
    # A claim on a host in no rack holds no place: only Placement shows it.
    book = FakeBook([Member('waiting', None, None)], waiting=['waiting'])
    locator = AskedLocator({'waiting': 'h9'})
    places = GroupPlaces.read(_group('affinity'), ['new'], book, locator,
                              lambda host, level: DOMAIN.get(host),
                              level_everywhere=lambda level: False)
    assert locator.asked == ['waiting'] and places.unknown_hosts == {'h9'}


def test_a_soft_policy_asks_placement_of_waiting_members_which_hold_no_place():
    book = FakeBook([Member('waiting', None, None), Member('settled', None, None)],
                    settled={'settled': 'h1'}, waiting=['waiting'])
    locator = AskedLocator({'waiting': 'h3', 'settled': 'h4'})
    places = GroupPlaces.read(_group(soft=True), ['new'], book, locator,
                              lambda host, level: DOMAIN.get(host))
    assert locator.asked == ['waiting'] and dict(places.counts) == {'r1': 1, 'r2': 1}


def test_a_settled_member_on_a_host_the_cache_does_not_know_is_asked_of_placement():
    book = FakeBook([Member('a', 'r3', 0)], settled={'a': 'gone-host'})
    locator = AskedLocator({'a': 'h1'})
    places = GroupPlaces.read(_group(), ['new'], book, locator,
                              lambda host, level: DOMAIN.get(host),
                              lambda host: host in DOMAIN)
    assert locator.asked == ['a'] and dict(places.counts) == {'r1': 1}


def test_reading_writes_nothing_tidy_writes_what_it_found():
    book = FakeBook([Member('a', 'r3', 0), Member('b', 'r2', 0)], gone=['b'])
    places = GroupPlaces.read(_group(), ['new'], book, FakeLocator({'a': 'h1'}),
                              lambda host, level: DOMAIN.get(host))
    assert (book.followed, book.released) == ([], [])
    places.tidy()
    assert (book.followed, book.released) == ([('a', 'r1')], [['b']])


def test_a_place_whose_member_is_gone_is_given_back_and_not_counted():
    book = FakeBook([Member('a', 'r1', 0), Member('b', 'r2', 0)], gone=['a'])
    places = _read(_group(), book, {})
    assert dict(places.counts) == {'r2': 1}
    assert book.released == [['a']]


def test_max_per_domain_fills_a_domain_at_that_many_members():
    book = FakeBook([Member('a', 'r1', 0), Member('b', 'r1', 1), Member('c', 'r2', 0)])
    places = _read(_group(max_per_domain=2), book, {})
    assert places.full_domains() == ['r1']


def test_affinity_asks_for_the_members_domains_and_forbids_nothing():
    places = _read(_group('affinity'), FakeBook([Member('a', None, None)]), {'a': 'h3'})
    assert (places.member_domains(), places.full_domains()) == (['r2'], [])


def test_soft_policies_ask_placement_nothing_and_take_no_place():
    places = _read(_group(soft=True), FakeBook([Member('a', 'r1', 0)]), {})
    assert (places.member_domains(), places.full_domains()) == ([], [])
    assert places.reserve('new', 'h1') and places.book.held == {}


def test_a_refused_place_marks_the_domain_full_and_a_failure_gives_places_back():
    book = FakeBook([], full=['r1'])
    places = _read(_group(), book, {})
    assert not places.reserve('new', 'h1')
    assert places.full_domains() == ['r1']
    assert places.reserve('new2', 'h3')
    assert places.unreserve_all() == ['new2'] and book.released == [['new2']]


def test_unreserve_gives_back_one_instance_place_and_is_idempotent():
    book = FakeBook([])
    places = _read(_group(), book, {})
    assert places.reserve('new', 'h1') and places.reserve('new2', 'h3')
    places.unreserve('new')
    places.unreserve('new')          # nothing left to give back
    places.unreserve('never')        # never reserved
    assert book.released == [['new']] and places.taken == {'new2': 'r2'}


def test_hard_alternates_stay_in_the_claimed_domain_above_the_host_level():
    places = _read(_group(), FakeBook([]), {})
    assert places.keeps_alternate('h1', 'h2')
    assert not places.keeps_alternate('h1', 'h3')
    host_level = GroupPlaces.read(InstanceGroup(uuid='g', policy='anti-affinity'), [],
                                  FakeBook([]), None, lambda h, lv: None)
    assert host_level.keeps_alternate('h1', 'h3')


def test_at_the_host_level_placement_is_asked_nothing():
    group = InstanceGroup(uuid='g', policy='anti-affinity')
    places = GroupPlaces.read(group, [], FakeBook([Member('a', 'h1', 0)]), None,
                              lambda h, lv: None)
    assert places.full_domains() == ['h1']
    assert (places.query_member_of(), places.query_not_member_of()) == ([], [])
