"""GPUs as HTCondor's execute point sees them: discovery, inventory and job environment.

A core in the same sense as the startd's: nothing here reads devices, files or the
clock. ``discovery`` is condor_gpu_discovery's logic and output over an enumeration of
devices that the caller supplies (``devices.simulated_enumeration`` for ``-simulate``,
``htcpool.runtime.gpu_nvml`` for real NVIDIA devices); ``inventory`` reads an inventory
command's output into ids and property ads for the startd; ``environment`` computes
the variables (``CUDA_VISIBLE_DEVICES``, ``_CONDOR_AssignedGPUs`` …) a job gets from its
slot. See docs/startd.md, "GPUs".
"""

from htcpool.gpu.devices import (
    SIMULATED,
    DeviceRecord,
    Enumeration,
    parse_simulate,
    simulated_enumeration,
)
from htcpool.gpu.discovery import (
    DiscoveryResult,
    device_properties,
    discover,
    format_discovery,
    id_from_uuid,
)
from htcpool.gpu.environment import apply_environment_knob, assigned_environment
from htcpool.gpu.errors import DiscoveryOptionError, GpuError, InventoryError
from htcpool.gpu.inventory import InventoryReading, discovery_arguments, read_inventory
from htcpool.gpu.options import USAGE, DiscoveryOptions, parse_options

__all__ = [
    "SIMULATED", "USAGE", "DeviceRecord", "DiscoveryOptionError", "DiscoveryOptions", "DiscoveryResult",
    "Enumeration", "GpuError", "InventoryError", "InventoryReading", "apply_environment_knob",
    "assigned_environment", "device_properties", "discover", "discovery_arguments", "format_discovery",
    "id_from_uuid", "parse_options", "parse_simulate", "read_inventory", "simulated_enumeration",
]
