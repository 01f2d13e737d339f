"""One cell in one process: a cell conductor and compute agents over an in-memory bus.

The bus is the embedded mode's ``MemoryBus``: it copies payloads through
JSON like a broker, so every payload crosses it serialized, and each test's
bus is isolated from the others'. The cell conductor and the
compute agents are built by ``build_cell_conductor`` and
``build_compute_agent``, as the daemons build them.
Placement is the real WSGI app in-process on SQLite, the cell DB a migrated
SQLite file.
"""
from __future__ import annotations

import uuid as uuidlib

from oslo_config import cfg
from sqlalchemy.engine import Engine

from cellplane import conf as shared_conf
from cellplane.context import RequestContext
from cellplane.objects import build_plans, compute_nodes, instance_actions, instances
from cellplane_embedded.memory_transport import MemoryBus
from compute_agent import conf as compute_conf
from compute_agent.hosted_host import HostedHost
from compute_agent.rpcapi import ComputeAPI
from compute_agent.virt.fake import FakeDriver, FakeSettings
from compute_agent.wiring import ComputeAgent, build_compute_agent
from conductor import conf as conductor_conf
from conductor.cell.rpcapi import CellConductorAPI
from conductor.cell.wiring import build_cell_conductor
from placement.client import PlacementClient
from rpc_schemas.flavor import Flavor
from rpc_schemas.instance import Instance
from rpc_schemas.request_spec import RequestSpec
from rpc_schemas.selection import Selection
from tests.support.polling import eventually

# A deadline for things that must happen, not a performance expectation.
CELL_UUID = '00000000-0000-0000-0000-00000000ce11'


class Cell:
    def __init__(self, engine: Engine, placement: PlacementClient, *,
                 max_attempts: int = 3) -> None:
        self.engine = engine
        self.placement = placement
        self.conf = cfg.ConfigOpts()
        shared_conf.register_opts(self.conf)
        compute_conf.register_opts(self.conf)
        conductor_conf.register_opts(self.conf)
        self.conf([], default_config_files=[], default_config_dirs=[])
        self.conf.set_override('availability_zone', 'az1', group='compute')
        self.conf.set_override('max_attempts', max_attempts, group='conductor')
        self.bus = MemoryBus('cell')
        self.transport = self.bus.transport
        self.compute = ComputeAPI(self.transport, conf=self.conf)
        self.conductor = CellConductorAPI(self.transport, conf=self.conf)
        # Host name -> its agent (one host) or its HostedHost (in a hollow agent).
        self.agents: dict[str, ComputeAgent | HostedHost] = {}
        self.hollow_agents: list[ComputeAgent] = []
        self.cell_conductor = build_cell_conductor(
            self.conf, transport=self.transport, engine=engine, placement=placement,
            host='cond1', owns_transport=False)
        self.rescheduler = self.cell_conductor.manager.rescheduler
        self.cell_conductor.service.start()

    def add_agent(self, host: str, **settings) -> ComputeAgent:
        """A started compute agent serving ``host``, once its first report reached the cell DB."""
        driver = FakeDriver(FakeSettings(**{'vcpus': 8, 'memory_mb': 4096,
                                            'reserved_memory_mb': 0, 'disk_gb': 100,
                                            **settings}))
        agent = build_compute_agent(self.conf, transport=self.transport,
                                    placement=self.placement, driver=driver,
                                    conductor=self.conductor, host=host,
                                    owns_transport=False)
        agent.service.start()
        self.agents[host] = agent
        # The first resource report runs at start; wait for it to land, so
        # that a test's own reports never race it.
        eventually(lambda: compute_nodes.get_node(self.engine, agent.node_uuid),
                   f'the first report of {host}')
        return agent

    def add_hollow_agent(self, name: str, count: int, *,
                         settings_for=lambda host: {}, **compute_options) -> ComputeAgent:
        """A started hollow agent serving ``<name>-1..count``, once all have reported.

        ``compute_options``: more ``[compute]`` options of the agent.
        """
        conf = self._conf_with(hosted_hosts=count, **compute_options)

        def driver_for(host: str) -> FakeDriver:
            return FakeDriver(FakeSettings(**{'vcpus': 8, 'memory_mb': 4096,
                                              'reserved_memory_mb': 0, 'disk_gb': 100,
                                              **settings_for(host)}))
        agent = build_compute_agent(conf, transport=self.transport,
                                    placement=self.placement, driver_for=driver_for,
                                    conductor=self.conductor, host=name,
                                    owns_transport=False)
        agent.service.start()
        self.hollow_agents.append(agent)
        self.agents.update(agent.hosts)
        uuids = [h.node_uuid for h in agent.hosts.values()]
        eventually(lambda: all(compute_nodes.get_node(self.engine, u) for u in uuids),
                   f'the first report of the {count} hosts of {name}')
        return agent

    def _conf_with(self, **compute_overrides) -> cfg.ConfigOpts:
        """A copy of the cell's settings with ``[compute]`` overrides (one agent's file)."""
        conf = cfg.ConfigOpts()
        shared_conf.register_opts(conf)
        compute_conf.register_opts(conf)
        conductor_conf.register_opts(conf)
        conf([], default_config_files=[], default_config_dirs=[])
        conf.set_override('availability_zone', 'az1', group='compute')
        for option, value in compute_overrides.items():
            conf.set_override(option, value, group='compute')
        return conf

    def selection(self, host: str, flavor: Flavor) -> Selection:
        """The Selection the scheduler would return for ``host`` (its own allocation request)."""
        node = self.agents[host].node_uuid
        resources = {'VCPU': flavor.vcpus, 'MEMORY_MB': flavor.memory_mb}
        if flavor.root_gb:
            resources['DISK_GB'] = flavor.root_gb
        return Selection(service_host=host, nodename=host, compute_node_uuid=node,
                         cell_uuid=CELL_UUID,
                         allocation_request={'allocations': {node: {'resources': resources}}},
                         allocation_request_version='1.36', availability_zone='az1')

    def boot(self, hosts: list[str], *, flavor: Flavor | None = None,
             name: str = 'vm', cast: bool = True) -> tuple[Instance, RequestSpec]:
        """What the super conductor does: create the instance, claim hosts[0], cast the build.

        ``cast=False``: everything but the cast, as if it were lost on its way.
        """
        flavor = flavor or Flavor(name='small', vcpus=2, memory_mb=1024, root_gb=10)
        instance = Instance(uuid=str(uuidlib.uuid4()), project_id='proj', user_id='user',
                            flavor=flavor, display_name=name, cell_uuid=CELL_UUID)
        spec = RequestSpec(flavor=flavor, project_id='proj', user_id='user')
        host_list = [self.selection(h, flavor) for h in hosts]
        with self.engine.begin() as conn:
            instances.create_instance(conn, instance)
            build_plans.record(conn, instance, spec, host_list)
        self.placement.claim(instance.uuid, host_list[0].allocation_request['allocations'],
                             project_id='proj', user_id='user')
        if cast:
            self.compute.build_and_run_instance(RequestContext(), hosts[0], instance,
                                                spec, host_list)
        return instance, spec

    def instance(self, uuid: str) -> dict:
        with self.engine.connect() as conn:
            return instances.get_instance(conn, uuid)

    def wait_for_state(self, uuid: str, vm_state: str) -> dict:
        return eventually(
            lambda: (lambda row: row if row['vm_state'] == vm_state else None)(
                self.instance(uuid)),
            f'instance {uuid} reaches {vm_state}')

    def history(self, uuid: str) -> list[instance_actions.AttemptEvent]:
        with self.engine.connect() as conn:
            return instance_actions.history(conn, uuid)

    def faults(self, uuid: str) -> list[dict]:
        with self.engine.connect() as conn:
            return instances.faults(conn, uuid)

    def allocations(self, uuid: str) -> dict:
        return self.placement.get_allocations(uuid).allocations

    def provider_usages(self, host: str) -> dict[str, int]:
        """What Placement counts as used on ``host``'s provider, non-zero classes only."""
        resp = self.placement.transport.request(
            'GET', f'/resource_providers/{self.agents[host].node_uuid}/usages')
        assert resp.status == 200, resp
        return {rc: n for rc, n in resp.body['usages'].items() if n}

    def stop(self) -> None:
        services = [self.cell_conductor.service,
                    *(agent.service for agent in self.agents.values()
                      if isinstance(agent, ComputeAgent)),
                    *(agent.service for agent in self.hollow_agents)]
        for service in services:
            service.begin_stop()
        for service in services:
            service.finish_stop()
        self.bus.cleanup()
