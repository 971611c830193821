"""GPU devices as discovery sees them, and HTCondor's table of simulated devices.

A ``DeviceRecord`` holds what condor_gpu_discovery learns of one device (its
"basic properties": uuid, name, PCI bus id, compute capability, memory, clock,
multiprocessor count, ECC, driver) plus, when NVML answers, its dynamic readings
(fan, power, temperature, ECC error counts). ``Enumeration`` is one look at a
machine: the devices in CUDA order, the MIG instances NVML reports, and the uuids of
the devices those instances live on (a MIG parent is not itself usable).

``simulated_enumeration`` builds the enumeration condor_gpu_discovery's
``-simulate:D,N[,D2,N2…]`` option pretends to find (man page, table 2.1). The table's
facts follow HTCondor 25's simulator: each simulated device gets the uuid
``<d><d>223334-4445-5667-899a-abbccddeeff0`` where ``<d><d>`` is ``a0 + 0x11 × index``
(so two devices are ``GPU-a0223334`` and ``GPU-b1223334``), the PCI bus id
``0000:<0x40 + index>:00.0``, no driver version, and the A100 entries report the
memory HTCondor's table computes for them (a multiplier of 1204 rather than 1024,
so ``GlobalMemoryMb`` is 47661 for the A100, as the real tool prints). The entries
past 4 are A100s in MIG mode: their MIG instances are the devices reported, with the
NVML uuid forms of the simulated driver (``MIG-GPU-<uuid>/<n>/0`` before driver
11.4, ``MIG-<uuid>`` with the instance number in the fourth byte from 11.4 on).
``-simulate:8`` (the table's length) simulates one of each entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcpool.gpu.errors import DiscoveryOptionError


@dataclass(frozen=True, slots=True)
class DeviceRecord:
    """One device's basic properties (``None``: unknown, not printed)."""

    uuid: str = ""  # CUDA devices: the bare uuid; NVML-only (MIG) devices: NVML's form
    name: str = ""
    pci_id: str = ""
    memory_bytes: int | None = None
    capability: tuple[int, int] | None = None
    multiprocessors: int | None = None
    clock_khz: int | None = None
    ecc_enabled: bool | None = None
    driver_version: int | None = None  # CUDA's integer form, 12040 for 12.4
    driver: str = ""  # the NVIDIA driver's version string
    #: readings for -dynamic (FanSpeedPct, PowerUsage_mw, DieTempC, EccErrorsSingleBit, …)
    dynamic: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Enumeration:
    """One look at a machine's GPUs."""

    devices: tuple[DeviceRecord, ...] = ()
    mig_instances: tuple[DeviceRecord, ...] = ()
    #: NVML uuids (``GPU-<uuid>``) of devices split into MIG instances, each with its instances
    mig_parents: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: why nothing was found, for the diagnostic output (empty when something was)
    note: str = ""


@dataclass(frozen=True, slots=True)
class SimulatedModel:
    """One row of the simulator's table."""

    name: str
    capability: tuple[int, int]
    clock_khz: int
    multiprocessors: int
    ecc: bool
    memory_bytes: int
    driver: int  # CUDA driver version the row simulates
    mig_memory_mb: tuple[int, ...] = ()  # one entry per MIG instance


_A100 = "A100-SXM4-40GB"
_MIG_1G = "NVIDIA A100-SXM4-40GB MIG 1g.5gb"
_MIG_3G = "NVIDIA A100-SXM4-40GB MIG 3g.20gb"
_MIB = 1024 * 1024

#: HTCondor 25's simulated devices, by the index ``-simulate`` takes
SIMULATED: tuple[SimulatedModel, ...] = (
    SimulatedModel("GeForce GT 330", (1, 2), 1340 * 1000, 12, False, 1024 * _MIB, 6000),
    SimulatedModel("GeForce GTX 480", (2, 0), 1400 * 1000, 15, False, 1536 * _MIB, 4020),
    SimulatedModel("Tesla V100-PCIE-16GB", (7, 0), 1380 * 1000, 80, True, 24220 * _MIB, 11020),
    SimulatedModel("TITAN RTX", (7, 5), 1770 * 1000, 72, False, 24220 * _MIB, 11020),
    SimulatedModel(_A100, (8, 0), 1410 * 1000, 42, True, 40536 * 1024 * 1204, 11020),
    SimulatedModel(_MIG_3G, (8, 0), 1410 * 1000, 42, True, 20096 * 1024 * 1204, 11020, (20086, 20082)),
    SimulatedModel(_MIG_1G, (8, 0), 1410 * 1000, 42, True, 4864 * 1024 * 1204, 11040, (4861,) * 7),
    SimulatedModel(_MIG_3G, (8, 0), 1410 * 1000, 42, True, 20096 * 1024 * 1204, 11040, (20086, 20082)),
)


def parse_simulate(spec: str | None) -> tuple[int, ...]:
    """The table indices ``-simulate[:D[,N[,D2,N2…]]]`` asks for, one per simulated device.

    No ``:D``: one device of row 0. ``D`` alone: one of row D. A first value equal to the
    table's length: one of every row."""
    if spec is None:
        return (0,)
    parts = spec.split(",")
    try:
        numbers = [int(p) for p in parts if p.strip() != ""]
    except ValueError:
        raise DiscoveryOptionError(_range_message()) from None
    if not numbers:
        raise DiscoveryOptionError(_range_message())
    if numbers[0] == len(SIMULATED):
        return tuple(range(len(SIMULATED)))
    out: list[int] = []
    for i in range(0, len(numbers), 2):
        index = numbers[i]
        count = numbers[i + 1] if i + 1 < len(numbers) else 1
        if not 0 <= index < len(SIMULATED):
            raise DiscoveryOptionError(_range_message())
        out.extend([index] * max(count, 0))
    return tuple(out)


def _range_message() -> str:
    return f"Error: simulation must be in range of 0-{len(SIMULATED)}"


def simulated_uuid(position: int, mig_byte: int = 0x34) -> str:
    """The uuid the simulator gives its ``position``-th device (or one of its MIG instances)."""
    raw = [(position * 0x11 + 0xA0) & 0xFF, 0x22, 0x33, mig_byte & 0xFF, 0x44, 0x45, 0x56, 0x67,
           0x89, 0x9A, 0xAB, 0xBC, 0xCD, 0xDE, 0xEF, 0xF0]
    text = "".join(f"{b:02x}" for b in raw)
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def _simulated_dynamic(position: int) -> dict[str, int]:
    """The simulator's NVML readings: fixed offsets from its device handle (0x100 + index)."""
    handle = 0x100 + (((position * 0x11 + 0xA0) & 0xFF) & 0x0F)
    return {"FanSpeedPct": 9 + handle, "PowerUsage_mw": 29 + handle, "DieTempC": 89 + handle,
            "EccErrorsSingleBit": 0, "EccErrorsDoubleBit": 0}


def simulated_enumeration(indices: tuple[int, ...]) -> Enumeration:
    """What discovery finds on a machine of simulated devices (see the module docstring)."""
    devices: list[DeviceRecord] = []
    instances: list[DeviceRecord] = []
    parents: dict[str, tuple[str, ...]] = {}
    mig_enabled = any(i > 1 for i in indices)  # the simulator turns MIG on for the newer rows only
    for position, index in enumerate(indices):
        model = SIMULATED[index]
        uuid = simulated_uuid(position)
        record = DeviceRecord(
            uuid=uuid, name=model.name, pci_id=f"0000:{position + 0x40:02x}:00.0",
            memory_bytes=model.memory_bytes, capability=model.capability,
            multiprocessors=model.multiprocessors, clock_khz=model.clock_khz, ecc_enabled=model.ecc,
            dynamic=_simulated_dynamic(position))
        devices.append(record)
        if not (mig_enabled and model.mig_memory_mb):
            continue
        children = []
        for n, memory_mb in enumerate(model.mig_memory_mb):
            if model.driver >= 11040:
                child = f"MIG-{simulated_uuid(position, n)}"
            else:
                child = f"MIG-GPU-{uuid}/{n}/0"
            children.append(child)
            # a MIG instance has no name of its own; capability and bus id are its parent's
            instances.append(DeviceRecord(
                uuid=child, pci_id=record.pci_id, memory_bytes=memory_mb * _MIB, capability=model.capability,
                clock_khz=model.clock_khz, ecc_enabled=model.ecc))
        parents[f"GPU-{uuid}"] = tuple(children)
    instances.sort(key=lambda r: r.uuid)
    return Enumeration(tuple(devices), tuple(instances), parents)


__all__ = ["SIMULATED", "DeviceRecord", "Enumeration", "SimulatedModel", "parse_simulate",
           "simulated_enumeration", "simulated_uuid"]
