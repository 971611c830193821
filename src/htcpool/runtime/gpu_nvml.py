"""Real NVIDIA devices through NVML (the ``nvidia-ml-py`` binding, module ``pynvml``).

``read_devices`` is the reader ``htcpool.gpu.discover`` calls when it is not
simulating: it asks NVML for every device in NVML's order and fills a
``DeviceRecord`` with what condor_gpu_discovery learns from CUDA (name, uuid, PCI bus
id, compute capability, memory, the SM clock's maximum, multiprocessor count, ECC
mode, the CUDA driver version and the NVIDIA driver's version string) and the NVML
readings ``-dynamic`` prints. A device in MIG mode is reported through its MIG
instances, which take what they lack (capability, clock, bus id, ECC, driver) from
their parent, as HTCondor's tool does. Without the binding, the library, a driver or
a device the answer is an empty enumeration with a note saying why: discovery then
prints ``DetectedGPUs=0``.

``sample_usage`` measures what the devices of one job are doing now: ``GPUsUsage``
(the sum over the devices of their utilisation, so 1.0 is one device fully busy) and
``GPUsMemoryUsage`` (MiB of device memory in use), or None when NVML cannot say.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from htcpool.gpu import DeviceRecord, DiscoveryOptions, Enumeration
from htcpool.gpu.discovery import cores_per_unit


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _try(call: Callable[[], Any]) -> Any:
    """``call()``, or None when NVML says the device cannot answer it."""
    import pynvml  # type: ignore[import-untyped]

    try:
        return call()
    except (pynvml.NVMLError, AttributeError, TypeError):
        return None


def _init() -> tuple[Any, str]:
    """The pynvml module, initialised, or None and why not."""
    try:
        import pynvml
    except ImportError:
        return None, "the NVML binding (nvidia-ml-py) is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as e:
        return None, f"NVML cannot start: {e}"
    return pynvml, ""


def _dynamic(nv: Any, handle: Any) -> dict[str, int]:
    readings = {
        "FanSpeedPct": _try(lambda: nv.nvmlDeviceGetFanSpeed(handle)),
        "PowerUsage_mw": _try(lambda: nv.nvmlDeviceGetPowerUsage(handle)),
        "DieTempC": _try(lambda: nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)),
        "EccErrorsSingleBit": _try(lambda: nv.nvmlDeviceGetTotalEccErrors(
            handle, nv.NVML_SINGLE_BIT_ECC, nv.NVML_VOLATILE_ECC)),
        "EccErrorsDoubleBit": _try(lambda: nv.nvmlDeviceGetTotalEccErrors(
            handle, nv.NVML_DOUBLE_BIT_ECC, nv.NVML_VOLATILE_ECC)),
    }
    return {k: int(v) for k, v in readings.items() if v is not None}


def _record(nv: Any, handle: Any, driver: str, cuda_version: int | None) -> DeviceRecord:
    uuid = _text(nv.nvmlDeviceGetUUID(handle))
    pci = _try(lambda: nv.nvmlDeviceGetPciInfo(handle))
    memory = _try(lambda: nv.nvmlDeviceGetMemoryInfo(handle))
    capability = _try(lambda: nv.nvmlDeviceGetCudaComputeCapability(handle))
    clock = _try(lambda: nv.nvmlDeviceGetMaxClockInfo(handle, nv.NVML_CLOCK_SM))
    attributes = _try(lambda: nv.nvmlDeviceGetAttributes(handle))
    ecc = _try(lambda: nv.nvmlDeviceGetEccMode(handle))
    name = _try(lambda: nv.nvmlDeviceGetName(handle))
    units = int(attributes.multiprocessorCount) if attributes is not None else None
    cores = _try(lambda: nv.nvmlDeviceGetNumGpuCores(handle))
    if units is None and cores and capability is not None:
        # NVML gives a whole GPU's multiprocessor count only as cores; CUDA's table has cores per unit
        units = int(cores) // cores_per_unit((int(capability[0]), int(capability[1])))
    bus = ""
    if pci is not None:
        bus = _text(getattr(pci, "busIdLegacy", b"") or getattr(pci, "busId", b""))
    return DeviceRecord(
        uuid=uuid[4:] if uuid.startswith("GPU-") else uuid,
        name=_text(name) if name is not None else "",
        pci_id=bus,
        memory_bytes=int(memory.total) if memory is not None else None,
        capability=(int(capability[0]), int(capability[1])) if capability is not None else None,
        multiprocessors=units,
        clock_khz=int(clock) * 1000 if clock is not None else None,
        ecc_enabled=bool(ecc[0] == nv.NVML_FEATURE_ENABLED) if ecc is not None else False,
        driver_version=cuda_version,
        driver=driver,
        dynamic=_dynamic(nv, handle),
    )


def _mig_instances(nv: Any, handle: Any, parent: DeviceRecord) -> list[DeviceRecord]:
    mode = _try(lambda: nv.nvmlDeviceGetMigMode(handle))
    if mode is None or mode[0] != nv.NVML_DEVICE_MIG_ENABLE:
        return []
    out = []
    for index in range(_try(lambda: nv.nvmlDeviceGetMaxMigDeviceCount(handle)) or 0):
        child = _try(partial(nv.nvmlDeviceGetMigDeviceHandleByIndex, handle, index))
        if child is None:
            continue  # MIG mode on, but no compute instance created here
        own = _record(nv, child, parent.driver, parent.driver_version)
        out.append(DeviceRecord(
            uuid=own.uuid if own.uuid.startswith("MIG-") else f"GPU-{own.uuid}", name=own.name,
            pci_id=parent.pci_id, memory_bytes=own.memory_bytes, capability=parent.capability,
            multiprocessors=own.multiprocessors, clock_khz=parent.clock_khz, ecc_enabled=parent.ecc_enabled,
            driver_version=parent.driver_version, driver=parent.driver, dynamic=own.dynamic))
    return out


def read_devices(options: DiscoveryOptions | None = None) -> Enumeration:
    """Every NVIDIA device NVML sees (see the module docstring)."""
    nv, why = _init()
    if nv is None:
        return Enumeration(note=why)
    try:
        driver = _try(lambda: _text(nv.nvmlSystemGetDriverVersion())) or ""
        cuda_version = _try(nv.nvmlSystemGetCudaDriverVersion)
        count = _try(nv.nvmlDeviceGetCount) or 0
        devices, instances, parents = [], [], {}
        for index in range(count):
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            record = _record(nv, handle, driver, cuda_version)
            devices.append(record)
            children = _mig_instances(nv, handle, record)
            if children:
                instances += children
                parents[f"GPU-{record.uuid}"] = tuple(c.uuid for c in children)
        instances.sort(key=lambda r: r.uuid)
        note = "" if devices else "NVML found no device"
        return Enumeration(tuple(devices), tuple(instances), parents, note)
    except nv.NVMLError as e:
        return Enumeration(note=f"NVML failed while listing devices: {e}")
    finally:
        _try(nv.nvmlShutdown)


def _full_uuid(device_uuid: str) -> str:
    return device_uuid if device_uuid.startswith(("GPU-", "MIG-")) else f"GPU-{device_uuid}"


def sample_usage(device_uuids: Iterable[str]) -> dict[str, float] | None:
    """``GPUsUsage`` and ``GPUsMemoryUsage`` (MiB) of the devices with these uuids (a slot's
    ``DeviceUuid`` values, bare or with their ``GPU-``/``MIG-`` prefix), or None."""
    wanted = [_full_uuid(u) for u in device_uuids]
    if not wanted:
        return None
    nv, _ = _init()
    if nv is None:
        return None
    try:
        busy = 0.0
        memory = 0.0
        seen = 0
        for uuid in wanted:
            handle = _try(partial(nv.nvmlDeviceGetHandleByUUID, uuid))
            if handle is None:
                continue
            rates = _try(partial(nv.nvmlDeviceGetUtilizationRates, handle))
            info = _try(partial(nv.nvmlDeviceGetMemoryInfo, handle))
            if rates is not None:
                busy += float(rates.gpu) / 100.0
            if info is not None:
                memory += float(info.used) / (1024.0 * 1024.0)
            seen += 1
        return {"GPUsUsage": busy, "GPUsMemoryUsage": memory} if seen else None
    finally:
        _try(nv.nvmlShutdown)


__all__ = ["read_devices", "sample_usage"]
