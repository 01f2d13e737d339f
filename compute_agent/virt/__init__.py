"""Virt drivers: what a compute agent builds instances with.

Drivers are stevedore plugins in the ``cellplane.compute.virt_drivers``
namespace, chosen by ``[compute] virt_driver``. ``driver.VirtDriver`` is the
interface; ``fake.FakeDriver`` builds nothing and fails on demand.
"""
