"""condor_gpu_discovery's decisions and output, from an enumeration of devices.

``discover(args, environ, read_devices)`` is the whole tool: it reads the options,
takes the devices from the simulator (``-simulate``) or from ``read_devices`` (the
live driver's NVML reader; never called when simulating), filters them by
``CUDA_VISIBLE_DEVICES``/``GPU_DEVICE_ORDINAL`` and ``-device``, and prints what HTCondor
25's tool prints (man page "ClassAd Output"):

* ``Detected<tag>="<id>, <id>"`` (``-config``: unquoted, plus ``NUM_DETECTED_<tag>``;
  ``-cron``: left out); with no device at all, ``Detected<tag>=0``;
* device ids: ``GPU-<first 8 hex digits of the uuid>`` by default, the whole uuid with
  ``-uuid``, ``<prefix><index>`` with ``-by-index`` (prefix ``CUDA``); a MIG instance is
  always its NVML uuid ``MIG-…``; a device split into MIG instances is not listed;
* with ``-properties``: properties whose value is the same on every device (the
  first device in id order decides) go into ``Common=[ …; ]`` and each device gets
  ``<id with - and / as _>=[ id="<id>"; <its other properties>; ]``; ``-not-nested``
  prints ``<prefix><Property>=`` and ``<id>_<Property>=`` lines instead; ``-mixed``
  keeps every property per device; ``-dynamic`` readings are always per device.
  Properties and devices are printed in byte order of their names, as the tool's
  maps order them;
* ``-repeat N`` lists the ids N times (``-packed``: each id N times in place);
  ``-divide N`` also divides each device's ``GlobalMemoryMb`` by N and keeps the
  whole amount as ``DeviceMemoryMb``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from htcpool.gpu.devices import DeviceRecord, Enumeration, simulated_enumeration
from htcpool.gpu.errors import DiscoveryOptionError
from htcpool.gpu.options import USAGE, DiscoveryOptions, parse_options

#: CUDA cores per multiprocessor by compute capability (NVIDIA's published table)
_CORES_PER_CU = {
    (1, 0): 8, (1, 1): 8, (1, 2): 8, (1, 3): 8, (2, 0): 32, (2, 1): 48, (3, 0): 192, (3, 2): 192,
    (3, 5): 192, (3, 7): 192, (5, 0): 128, (5, 2): 128, (5, 3): 128, (6, 0): 64, (6, 1): 128,
    (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (9, 0): 128,
    (10, 0): 128, (10, 1): 128, (10, 3): 128, (11, 0): 128, (12, 0): 128, (12, 1): 128,
}

Reader = Callable[[DiscoveryOptions], Enumeration]


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    """What the tool writes and its exit status."""

    stdout: str
    stderr: str = ""
    exit_code: int = 0


@dataclass(slots=True)
class _Allowed:
    """Which devices may be reported: by index, by id prefix (``CUDA_VISIBLE_DEVICES`` and ``-device``)."""

    indices: set[int] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, items: Sequence[str]) -> _Allowed:
        allowed = cls()
        for item in items:
            digits = item.lstrip("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
            if digits.isdigit():
                allowed.indices.add(int(digits))
            else:
                allowed.prefixes.add(item)
        return allowed

    def skip_index(self, index: int) -> bool:
        return not self.prefixes and bool(self.indices) and index not in self.indices

    def admits(self, device_id: str, index: int) -> bool:
        if any(device_id.startswith(p) for p in self.prefixes):
            return True
        if self.indices:
            return index in self.indices
        return not self.prefixes


def id_from_uuid(uuid: str, short: bool) -> str:
    """The device id for a uuid: ``GPU-<uuid>`` (its first 12 characters when ``short``);
    a MIG uuid stays as it is."""
    if uuid.startswith("MIG-"):
        return uuid
    if "GPU-" not in uuid:
        uuid = "GPU-" + uuid
    return uuid[:12] if short and uuid.startswith("GPU-") else uuid


def cores_per_unit(capability: tuple[int, int]) -> int:
    """CUDA cores per multiprocessor for a compute capability (the newest known for a newer one)."""
    return _CORES_PER_CU.get(capability, 128)


def _f32(x: float) -> float:
    return float(struct.unpack("f", struct.pack("f", x))[0])


def device_properties(record: DeviceRecord, extra: bool) -> dict[str, str]:
    """A device's properties as ClassAd value text, keyed by HTCondor's names (table 1.1, 1.2)."""
    p: dict[str, str] = {}
    if record.uuid:
        p["DeviceUuid"] = f'"{record.uuid}"'
    if record.name:
        p["DeviceName"] = f'"{record.name}"'
    if record.pci_id:
        p["DevicePciBusId"] = f'"{record.pci_id}"'
    if record.capability is not None:
        p["Capability"] = f"{record.capability[0]}.{record.capability[1]}"
    if record.ecc_enabled is not None:
        p["ECCEnabled"] = "true" if record.ecc_enabled else "false"
    if record.memory_bytes is not None:
        p["GlobalMemoryMb"] = f"{record.memory_bytes / (1024.0 * 1024.0):.0f}"
    if record.driver:
        p["NvidiaDriver"] = f'"{record.driver}"'
    if record.driver_version is not None:
        v = record.driver_version
        p["DriverVersion"] = f"{v // 1000}.{v % 100}"
        p["MaxSupportedVersion"] = str(v)
    if extra:
        if record.clock_khz is not None:
            p["ClockMhz"] = f"{_f32(_f32(float(record.clock_khz)) * _f32(1e-3)):.2f}"
        if record.multiprocessors:
            p["ComputeUnits"] = str(record.multiprocessors)
        if record.capability is not None:
            p["CoresPerCU"] = str(cores_per_unit(record.capability))
    return p


@dataclass(slots=True)
class _Found:
    ids: list[str] = field(default_factory=list)
    props: dict[str, dict[str, str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _collect(found: Enumeration, opts: DiscoveryOptions, allowed: _Allowed) -> _Found:
    """The reported devices, in the tool's order, with their properties."""
    out = _Found()
    by_uuid = opts.uuid is not False
    short = opts.short_uuid is not False
    if any(not d.uuid for d in found.devices):
        if opts.uuid:
            out.errors.append("Not enumerating NVML devices because a CUDA device has no UUID.")
        if opts.uuid is None:
            by_uuid = short = False
        found = Enumeration(found.devices)
    prefix = opts.prefix or "CUDA"
    for index, record in enumerate(found.devices):
        if allowed.skip_index(index):
            continue
        if record.uuid and not allowed.admits(id_from_uuid(record.uuid, False), index):
            continue
        device_id = id_from_uuid(record.uuid, short) if by_uuid and record.uuid else f"{prefix}{index}"
        if record.uuid and f"GPU-{record.uuid}" in found.mig_parents:
            continue
        out.ids.append(device_id)
        if opts.properties:
            out.props[device_id] = device_properties(record, opts.extra)
            if opts.dynamic:
                out.props[device_id].update({k: str(v) for k, v in record.dynamic.items()})
    for record in found.mig_instances:
        if not allowed.admits(record.uuid, -1):
            continue
        device_id = id_from_uuid(record.uuid, short)
        out.ids.append(device_id)
        if opts.properties:
            out.props[device_id] = device_properties(record, opts.extra)
            if opts.dynamic:
                out.props[device_id].update({k: str(v) for k, v in record.dynamic.items()})
    return out


def _common(props: dict[str, dict[str, str]], opts: DiscoveryOptions) -> dict[str, str]:
    """Properties equal on every device, judged from the first device in id order; dynamic
    readings never count (they are compared before they are added in HTCondor's tool)."""
    if not opts.properties or opts.mixed or not props:
        return {}
    names = sorted(props)
    dynamic_keys = {"FanSpeedPct", "PowerUsage_mw", "DieTempC", "EccErrorsSingleBit", "EccErrorsDoubleBit"}
    common = {}
    for key, value in sorted(props[names[0]].items()):
        if opts.dynamic and key in dynamic_keys:
            continue
        if opts.divide and opts.repeat and key == "GlobalMemoryMb":
            continue
        if all(props[n].get(key) == value for n in names[1:]):
            common[key] = value
    return common


def _repeat(ids: list[str], props: dict[str, dict[str, str]], opts: DiscoveryOptions) -> list[str]:
    if opts.repeat <= 0:
        return ids
    listed = [i for i in ids for _ in range(opts.repeat)] if opts.packed else ids * opts.repeat
    if opts.divide:
        for p in props.values():
            if "GlobalMemoryMb" in p:
                whole = int(p["GlobalMemoryMb"])
                p["GlobalMemoryMb"] = str(whole // opts.repeat)
                if whole:
                    p["DeviceMemoryMb"] = str(whole)
    return listed


def format_discovery(found: Enumeration, opts: DiscoveryOptions, visible: Sequence[str] = ()) -> str:
    """The tool's standard output for ``found`` (``visible``: the device filter's items)."""
    tag = opts.tag
    if not found.devices and not found.mig_instances:
        lines = [] if opts.cron else [f"Detected{tag}=0"]
        return "".join(f"{line}\n" for line in lines + ([f"NUM_DETECTED_{tag}=0"] if opts.config else []))
    got = _collect(found, opts, _Allowed.of(list(visible) + opts.devices))
    lines = [f'condor_gpu_discovery_error = "{e}"' for e in got.errors]
    common = _common(got.props, opts)
    ids = ", ".join(_repeat(got.ids, got.props, opts))
    if not opts.cron:
        lines.append(f"Detected{tag}={ids}" if opts.config else f'Detected{tag}="{ids}"')
    if opts.config:
        lines.append(f"NUM_DETECTED_{tag}={len(got.ids)}")
    if opts.properties:
        prefix = opts.prefix or "CUDA"
        if common:
            if opts.nested:
                lines.append("Common=[ " + "".join(f"{k}={v}; " for k, v in common.items()) + "]")
            else:
                lines += [f"{prefix}{k}={v}" for k, v in common.items()]
        for device_id in sorted(got.props):
            own = {k: v for k, v in sorted(got.props[device_id].items()) if k not in common}
            if not got.props[device_id]:
                continue
            name = device_id.replace("-", "_").replace("/", "_")
            if opts.nested:
                lines.append(f'{name}=[ id="{device_id}"; ' + "".join(f"{k}={v}; " for k, v in own.items()) + "]")
            else:
                lines += [f"{name}{k}={v}" for k, v in own.items()]
    return "".join(f"{line}\n" for line in lines)


def visible_devices(environ: Mapping[str, str]) -> list[str]:
    """The device filter from ``CUDA_VISIBLE_DEVICES`` and ``GPU_DEVICE_ORDINAL``."""
    items: list[str] = []
    for name in ("CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"):
        items += [w.strip() for w in environ.get(name, "").split(",") if w.strip()]
    return items


def discover(args: Sequence[str], environ: Mapping[str, str], read_devices: Reader,
             program: str = "condor_gpu_discovery") -> DiscoveryResult:
    """Run the tool on ``args``: its output, error text and exit status."""
    try:
        opts = parse_options(args)
    except DiscoveryOptionError as e:
        return DiscoveryResult("", f"{e}\n{USAGE.format(argv0=program)}", 1)
    if opts.help:
        return DiscoveryResult(USAGE.format(argv0=program))
    found = simulated_enumeration(opts.simulate) if opts.simulate is not None else read_devices(opts)
    notes = ""
    if found.note and (opts.diagnostic or (opts.dynamic and not found.devices)):
        notes = f"# {found.note}\n"
    return DiscoveryResult(format_discovery(found, opts, visible_devices(environ)), notes)


__all__ = ["DiscoveryResult", "device_properties", "discover", "format_discovery", "id_from_uuid",
           "visible_devices"]
