"""The ground's microversion negotiation (cellplane/wsgi/microversion.py), shared by the HTTP daemons."""
from __future__ import annotations

import pytest

from cellplane.wsgi.microversion import MalformedVersion, Negotiator, UnacceptableVersion

COMPUTE = Negotiator('compute', '2.1', '2.5', legacy_header='X-OpenStack-Nova-API-Version')


def _environ(**headers):
    return {'HTTP_' + k.upper(): v for k, v in headers.items()}


def test_without_a_header_the_minimum_and_latest_the_maximum():
    assert COMPUTE.from_environ({}) == (2, 1)
    assert COMPUTE.from_environ(_environ(openstack_api_version='compute latest')) == (2, 5)


def test_the_legacy_header_alone_and_the_standard_one_winning_over_it():
    assert COMPUTE.from_environ(_environ(x_openstack_nova_api_version='2.3')) == (2, 3)
    assert COMPUTE.from_environ(_environ(openstack_api_version='compute 2.4',
                                         x_openstack_nova_api_version='2.2')) == (2, 4)


def test_another_services_version_is_not_ours():
    assert COMPUTE.from_environ(_environ(openstack_api_version='placement 1.39')) == (2, 1)


@pytest.mark.parametrize('value, error', [('2.6', UnacceptableVersion),
                                          ('2.0', UnacceptableVersion),
                                          ('two', MalformedVersion)])
def test_a_version_outside_the_range_or_malformed_is_refused_naming_it(value, error):
    with pytest.raises(error) as raised:
        COMPUTE.from_environ(_environ(openstack_api_version=f'compute {value}'))
    assert raised.value.value == value


def test_a_service_without_a_legacy_header_ignores_novas():
    placement = Negotiator('placement', '1.0', '1.39')
    assert placement.from_environ(_environ(x_openstack_nova_api_version='1.5')) == (1, 0)
    assert placement.from_environ(_environ(openstack_api_version='placement 1.14')) == (1, 14)
