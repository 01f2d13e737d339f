"""Each filter: passes the hosts that answer yes, rejects the others with its named reason."""
from __future__ import annotations

from oslo_config import cfg

from rpc_schemas.request_spec import InstanceGroup, RequestedDestination, SchedulingRetry
from scheduler import conf as scheduler_conf
from scheduler.filter_chain import run_filters
from scheduler.filters import (
    aggregate_extra_specs,
    availability_zone,
    compute,
    ignore_hosts,
    image_properties,
    requested_destination,
    resource_fit,
    retry,
)
from scheduler.hints import different_host_filter as different_host
from scheduler.hints import same_host_filter as same_host
from scheduler.host_state import HostAggregate
from scheduler.server_group import affinity_filter as affinity
from scheduler.server_group import anti_affinity_filter as anti_affinity
from tests.unit.scheduler.factories import flavor, host, scheduling_request, spec


def _check(host_filter, host_state, request_spec=None, **request_overrides):
    return host_filter.check(host_state, scheduling_request(request_spec, **request_overrides))


# -- ComputeFilter -------------------------------------------------------------

def test_compute_filter_passes_an_up_and_enabled_service():
    assert _check(compute.ComputeFilter(), host('h1')) is None


def test_compute_filter_rejects_a_down_service():
    rejection = _check(compute.ComputeFilter(), host('h1', service_up=False))
    assert rejection.reason == compute.SERVICE_DOWN


def test_compute_filter_rejects_a_disabled_service_with_the_operator_reason():
    rejection = _check(compute.ComputeFilter(),
                       host('h1', service_disabled=True, disabled_reason='maintenance'))
    assert rejection.reason == compute.SERVICE_DISABLED
    assert 'maintenance' in rejection.detail


def test_compute_filter_rejects_a_node_whose_cell_database_could_not_be_read():
    rejection = _check(compute.ComputeFilter(),
                       host('h1', cell_unreadable='connection refused'))
    assert rejection.reason == compute.CELL_UNREADABLE
    assert 'connection refused' in rejection.detail


# -- AvailabilityZoneFilter ----------------------------------------------------

def test_zone_filter_passes_everything_when_no_zone_is_asked():
    assert _check(availability_zone.AvailabilityZoneFilter(), host('h1')) is None


def test_zone_filter_passes_a_host_in_the_zone():
    assert _check(availability_zone.AvailabilityZoneFilter(),
                  host('h1', availability_zone='az2'), spec(availability_zone='az2')) is None


def test_zone_filter_rejects_a_host_in_another_zone_saying_which():
    rejection = _check(availability_zone.AvailabilityZoneFilter(),
                       host('h1', availability_zone='az1'), spec(availability_zone='az2'))
    assert rejection.reason == availability_zone.NOT_IN_ZONE
    assert 'not in availability zone az2' in rejection.detail
    assert 'az1' in rejection.detail


def test_zone_filter_puts_a_host_in_no_zone_in_the_default_zone_nova():
    f = availability_zone.AvailabilityZoneFilter()
    assert _check(f, host('h1'), spec(availability_zone='nova')) is None
    rejection = _check(f, host('h1'), spec(availability_zone='az1'))
    assert rejection.detail == 'not in availability zone az1 (host is in nova)'
    assert _check(f, host('h1', availability_zone='az1'),
                  spec(availability_zone='nova')).reason == availability_zone.NOT_IN_ZONE


def test_zone_filter_reads_the_default_zone_from_the_configuration():
    conf = cfg.ConfigOpts()
    scheduler_conf.register_opts(conf)
    conf([])
    conf.set_override('default_availability_zone', 'zone0')
    f = availability_zone.AvailabilityZoneFilter()
    f.configure(conf)
    assert _check(f, host('h1'), spec(availability_zone='zone0')) is None
    assert _check(f, host('h1'), spec(availability_zone='nova')).reason == (
        availability_zone.NOT_IN_ZONE)


def test_zone_filter_uses_the_zone_of_the_host_aggregate():
    agg = HostAggregate(uuid='a', name='a', metadata={'availability_zone': 'az2'})
    assert _check(availability_zone.AvailabilityZoneFilter(),
                  host('h1', aggregates=[agg]), spec(availability_zone='az2')) is None


# -- AggregateInstanceExtraSpecsFilter -----------------------------------------

def _agg_spec(**specs):
    return spec(flavor=flavor(extra_specs={
        f'aggregate_instance_extra_specs:{k}': v for k, v in specs.items()}))


SSD = HostAggregate(uuid='a1', name='fast', metadata={'disk': 'ssd,nvme', 'net': '25g'})


def test_aggregate_specs_filter_ignores_flavors_without_scoped_specs():
    f = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()
    assert _check(f, host('h1'), spec(flavor=flavor(extra_specs={'disk': 'ssd'}))) is None


def test_aggregate_specs_filter_passes_matching_metadata_including_one_of_a_list():
    f = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()
    assert _check(f, host('h1', aggregates=[SSD]), _agg_spec(disk='nvme', net='25g')) is None


def test_aggregate_specs_filter_rejects_a_missing_key():
    f = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()
    rejection = _check(f, host('h1', aggregates=[SSD]), _agg_spec(gpu='yes'))
    assert rejection.reason == aggregate_extra_specs.METADATA_MISSING
    assert 'gpu' in rejection.detail


def test_aggregate_specs_filter_rejects_a_different_value():
    f = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()
    rejection = _check(f, host('h1', aggregates=[SSD]), _agg_spec(disk='hdd'))
    assert rejection.reason == aggregate_extra_specs.METADATA_MISMATCH


def test_aggregate_specs_filter_rejects_a_host_without_aggregates():
    f = aggregate_extra_specs.AggregateInstanceExtraSpecsFilter()
    assert _check(f, host('h1'), _agg_spec(disk='ssd')).reason == \
        aggregate_extra_specs.METADATA_MISSING


# -- ImagePropertiesFilter -----------------------------------------------------

X86_KVM = {'supported_instances': [['x86_64', 'kvm', 'hvm'], ['i686', 'kvm', 'hvm']]}


def _image(**props):
    return spec(image_properties=props)


def test_image_filter_passes_an_image_without_properties():
    assert _check(image_properties.ImagePropertiesFilter(), host('h1')) is None


def test_image_filter_passes_a_supported_architecture_and_hypervisor():
    f = image_properties.ImagePropertiesFilter()
    assert _check(f, host('h1', stats=X86_KVM),
                  _image(hw_architecture='x86_64', img_hv_type='KVM')) is None


def test_image_filter_rejects_an_unsupported_architecture():
    f = image_properties.ImagePropertiesFilter()
    rejection = _check(f, host('h1', stats=X86_KVM), _image(hw_architecture='aarch64'))
    assert rejection.reason == image_properties.IMAGE_UNSUPPORTED
    assert 'aarch64' in rejection.detail


def test_image_filter_matches_properties_within_one_triple():
    f = image_properties.ImagePropertiesFilter()
    rejection = _check(f, host('h1', stats=X86_KVM),
                       _image(hw_architecture='i686', hw_vm_mode='xen'))
    assert rejection.reason == image_properties.IMAGE_UNSUPPORTED


def test_image_filter_rejects_a_host_that_reports_nothing_when_the_image_asks():
    f = image_properties.ImagePropertiesFilter()
    assert _check(f, host('h1'), _image(hw_architecture='x86_64')).reason == \
        image_properties.NO_SUPPORTED_INSTANCES


# -- IgnoreHostsFilter and RetryFilter -----------------------------------------

def test_ignore_hosts_filter_rejects_only_ignored_hosts():
    f = ignore_hosts.IgnoreHostsFilter()
    request_spec = spec(ignore_hosts=['h1'])
    assert _check(f, host('h1'), request_spec).reason == ignore_hosts.HOST_IGNORED
    assert _check(f, host('h2'), request_spec) is None


def test_retry_filter_rejects_hosts_already_tried():
    f = retry.RetryFilter()
    request_spec = spec(retry=SchedulingRetry(num_attempts=2, hosts=['h1']))
    rejection = _check(f, host('h1'), request_spec)
    assert rejection.reason == retry.ALREADY_TRIED
    assert 'attempt 2' in rejection.detail
    assert _check(f, host('h2'), request_spec) is None
    assert _check(f, host('h1')) is None


# -- ResourceFitFilter ---------------------------------------------------------

def test_resource_fit_passes_a_host_with_room():
    assert _check(resource_fit.ResourceFitFilter(), host('h1')) is None


def test_resource_fit_rejects_a_host_made_full_by_consumed_claims():
    state = host('h1', capacity={'VCPU': 4, 'MEMORY_MB': 1024})
    state.consume({'MEMORY_MB': 768})
    rejection = _check(resource_fit.ResourceFitFilter(), state,
                       resources={'VCPU': 1, 'MEMORY_MB': 512})
    assert rejection.reason == resource_fit.INSUFFICIENT_RESOURCES
    assert 'MEMORY_MB 256 free, 512 needed' in rejection.detail


def test_resource_fit_leaves_classes_from_sharing_providers_to_placement():
    state = host('h1', capacity={'VCPU': 4})
    assert _check(resource_fit.ResourceFitFilter(), state,
                  resources={'VCPU': 1, 'DISK_GB': 100}) is None


# -- RequestedDestinationFilter ------------------------------------------------

def test_requested_destination_filters_by_host_node_and_cell():
    f = requested_destination.RequestedDestinationFilter()
    by_host = spec(requested_destination=RequestedDestination(host='h1'))
    assert _check(f, host('h1'), by_host) is None
    assert _check(f, host('h2'), by_host).reason == requested_destination.NOT_REQUESTED_HOST
    by_node = spec(requested_destination=RequestedDestination(nodename='h2'))
    assert _check(f, host('h1'), by_node).reason == requested_destination.NOT_REQUESTED_NODE
    by_cell = spec(requested_destination=RequestedDestination(cell_uuid='cell-2'))
    assert _check(f, host('h1'), by_cell).reason == requested_destination.NOT_REQUESTED_CELL
    assert _check(f, host('h1', cell='cell-2'), by_cell) is None


# -- the chain -----------------------------------------------------------------

def test_chain_counts_removals_per_filter_and_reason():
    hosts = [host('h1', availability_zone='az1'), host('h2', availability_zone='az2'),
             host('h3', availability_zone='az1', service_up=False),
             host('h4', availability_zone='az1', service_disabled=True)]
    passed, steps = run_filters(
        [compute.ComputeFilter(), availability_zone.AvailabilityZoneFilter()],
        hosts, scheduling_request(spec(availability_zone='az1')))
    assert [h.host for h in passed] == ['h1']
    assert [(s.filter, s.hosts_in, s.hosts_out) for s in steps] == [
        ('ComputeFilter', 4, 2), ('AvailabilityZoneFilter', 2, 1)]
    assert steps[0].reasons == {compute.SERVICE_DOWN: 1, compute.SERVICE_DISABLED: 1}
    assert steps[1].rejected == {'h2/h2': 'not in availability zone az1 (host is in az2)'}


def test_chain_stops_once_no_host_remains():
    passed, steps = run_filters(
        [compute.ComputeFilter(), availability_zone.AvailabilityZoneFilter()],
        [host('h1', service_up=False)], scheduling_request())
    assert passed == [] and [s.filter for s in steps] == ['ComputeFilter']


def test_chain_skips_filters_the_request_asks_nothing_of():
    class Exploding(compute.ComputeFilter):
        name = 'Exploding'

        def applies(self, request):
            return False

        def check(self, host, request):
            raise AssertionError('a filter that does not apply must not be asked')

    passed, steps = run_filters([Exploding(), compute.ComputeFilter()],
                                [host('h1')], scheduling_request())
    assert [h.host for h in passed] == ['h1']
    assert [s.filter for s in steps] == ['ComputeFilter']


def test_each_optional_filter_applies_exactly_when_the_request_asks_for_it():
    plain = scheduling_request()
    asking = {
        availability_zone.AvailabilityZoneFilter(): spec(availability_zone='az1'),
        aggregate_extra_specs.AggregateInstanceExtraSpecsFilter(): _agg_spec(disk='ssd'),
        image_properties.ImagePropertiesFilter(): _image(hw_architecture='x86_64'),
        ignore_hosts.IgnoreHostsFilter(): spec(ignore_hosts=['h1']),
        retry.RetryFilter(): spec(retry=SchedulingRetry(num_attempts=1, hosts=['h1'])),
        different_host.DifferentHostFilter(): spec(scheduler_hints={'different_host': ['i']}),
        same_host.SameHostFilter(): spec(scheduler_hints={'same_host': ['i']}),
        affinity.ServerGroupAffinityFilter(): spec(instance_group=InstanceGroup(
            uuid='g1', policy='affinity')),
        anti_affinity.ServerGroupAntiAffinityFilter(): spec(instance_group=InstanceGroup(
            uuid='g1', policy='anti-affinity')),
        requested_destination.RequestedDestinationFilter():
            spec(requested_destination=RequestedDestination(host='h1')),
    }
    for host_filter, request_spec in asking.items():
        assert not host_filter.applies(plain), host_filter.name
        assert host_filter.applies(scheduling_request(request_spec)), host_filter.name
    assert compute.ComputeFilter().applies(plain)
    assert resource_fit.ResourceFitFilter().applies(plain)
