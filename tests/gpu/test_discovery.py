"""condor_gpu_discovery's output for simulated devices, option by option (man page examples and
HTCondor 25's simulator: ids GPU-a0223334, GPU-b1223334 …, bus ids 0000:40:00.0 …)."""

from __future__ import annotations

import pytest

from htcpool.gpu import (
    DeviceRecord,
    DiscoveryOptions,
    Enumeration,
    discover,
    parse_options,
    simulated_enumeration,
)


def never(_: DiscoveryOptions) -> Enumeration:
    raise AssertionError("the device reader must not run when simulating")


def out(*args: str, environ: dict[str, str] | None = None) -> str:
    result = discover(list(args), environ or {}, never)
    assert result.exit_code == 0, result.stderr
    return result.stdout


GTX = '''Common=[ Capability=2.0; DeviceName="GeForce GTX 480"; ECCEnabled=false; GlobalMemoryMb=1536; ]
GPU_a0223334=[ id="GPU-a0223334"; DevicePciBusId="0000:40:00.0"; DeviceUuid="a0223334-4445-5667-899a-abbccddeeff0"; ]
GPU_b1223334=[ id="GPU-b1223334"; DevicePciBusId="0000:41:00.0"; DeviceUuid="b1223334-4445-5667-899a-abbccddeeff0"; ]
'''

CASES = [
    (["-simulate:1,2"], 'DetectedGPUs="GPU-a0223334, GPU-b1223334"\n'),
    (["-simulate:1,2", "-properties"], 'DetectedGPUs="GPU-a0223334, GPU-b1223334"\n' + GTX),
    (["-simulate:1,2", "-prop", "-nested"], 'DetectedGPUs="GPU-a0223334, GPU-b1223334"\n' + GTX),
    (["-simulate"], 'DetectedGPUs="GPU-a0223334"\n'),
    (["-simulate:3"], 'DetectedGPUs="GPU-a0223334"\n'),
    (["-simulate:1,2", "-by-index"], 'DetectedGPUs="CUDA0, CUDA1"\n'),
    (["-simulate:1,2", "-by-index", "-prefix", "GPU"], 'DetectedGPUs="GPU0, GPU1"\n'),
    (["-simulate:1,1", "-uuid"], 'DetectedGPUs="GPU-a0223334-4445-5667-899a-abbccddeeff0"\n'),
    (["-simulate:1,2", "-tag", "TestGPUs"], 'DetectedTestGPUs="GPU-a0223334, GPU-b1223334"\n'),
    (["-simulate:1,2", "-config"], "DetectedGPUs=GPU-a0223334, GPU-b1223334\nNUM_DETECTED_GPUs=2\n"),
    (["-simulate:1,2", "-cron"], ""),
    (["-simulate:1,2", "-repeat"], 'DetectedGPUs="GPU-a0223334, GPU-b1223334, GPU-a0223334, GPU-b1223334"\n'),
    (["-simulate:1,2", "-repeat", "2", "-packed"],
     'DetectedGPUs="GPU-a0223334, GPU-a0223334, GPU-b1223334, GPU-b1223334"\n'),
    (["-simulate:4", "-extra", "-not-nested", "-prefix", "Discovered"],
     'DetectedGPUs="GPU-a0223334"\nDiscoveredCapability=8.0\nDiscoveredClockMhz=1410.00\nDiscoveredComputeUnits=42\n'
     'DiscoveredCoresPerCU=64\nDiscoveredDeviceName="A100-SXM4-40GB"\nDiscoveredDevicePciBusId="0000:40:00.0"\n'
     'DiscoveredDeviceUuid="a0223334-4445-5667-899a-abbccddeeff0"\nDiscoveredECCEnabled=true\n'
     'DiscoveredGlobalMemoryMb=47661\n'),
    (["-simulate:1,2", "-divide", "3", "-properties"],
     'DetectedGPUs="GPU-a0223334, GPU-b1223334, GPU-a0223334, GPU-b1223334, GPU-a0223334, GPU-b1223334"\n'
     'Common=[ Capability=2.0; DeviceName="GeForce GTX 480"; ECCEnabled=false; ]\n'
     'GPU_a0223334=[ id="GPU-a0223334"; DeviceMemoryMb=1536; DevicePciBusId="0000:40:00.0"; '
     'DeviceUuid="a0223334-4445-5667-899a-abbccddeeff0"; GlobalMemoryMb=512; ]\n'
     'GPU_b1223334=[ id="GPU-b1223334"; DeviceMemoryMb=1536; DevicePciBusId="0000:41:00.0"; '
     'DeviceUuid="b1223334-4445-5667-899a-abbccddeeff0"; GlobalMemoryMb=512; ]\n'),
]


@pytest.mark.parametrize(("args", "expected"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_output(args: list[str], expected: str) -> None:
    assert out(*args) == expected


def test_mixed_devices_keep_their_own_properties() -> None:
    """Man page example: one GT 330, three GTX 480 and one TITAN RTX; only ECCEnabled is common."""
    lines = out("-simulate:0,1,1,3,3,1", "-properties").splitlines()
    assert lines[0] == 'DetectedGPUs="GPU-a0223334, GPU-b1223334, GPU-c2223334, GPU-d3223334, GPU-e4223334"'
    assert lines[1] == "Common=[ ECCEnabled=false; ]"
    assert lines[2].startswith('GPU_a0223334=[ id="GPU-a0223334"; Capability=1.2; DeviceName="GeForce GT 330"; ')
    assert lines[5].startswith('GPU_d3223334=[ id="GPU-d3223334"; Capability=2.0; ')
    assert 'Capability=7.5; DeviceName="TITAN RTX"' in lines[6] and "GlobalMemoryMb=24220" in lines[6]


def test_mixed_option_gathers_nothing_into_common() -> None:
    text = out("-simulate:1,2", "-properties", "-mixed")
    assert "Common" not in text and text.count("Capability=2.0") == 2


def test_dynamic_readings_are_per_device() -> None:
    text = out("-simulate:1,2", "-dynamic")
    assert "DieTempC=345; EccErrorsDoubleBit=0; EccErrorsSingleBit=0; FanSpeedPct=265; PowerUsage_mw=285;" in text
    assert "DieTempC=346;" in text and "FanSpeedPct" not in text.splitlines()[1]


def test_mig_instances_replace_their_parent() -> None:
    """A simulated A100 in MIG 1g.5gb mode (driver 11.4): seven MIG instances, no parent."""
    text = out("-simulate:6", "-properties")
    detected = text.splitlines()[0]
    assert detected.count("MIG-") == 7 and "GPU-a0223334" not in detected
    assert 'MIG-a0223300-4445-5667-899a-abbccddeeff0' in detected
    assert "Common=[ Capability=8.0; DevicePciBusId=\"0000:40:00.0\"; ECCEnabled=true; GlobalMemoryMb=4861; ]" in text
    older = out("-simulate:5")  # driver 11.2 names instances after the parent
    assert "MIG-GPU-a0223334-4445-5667-899a-abbccddeeff0/0/0" in older


def test_visible_devices_filter_by_index_and_id() -> None:
    assert out("-simulate:1,3", environ={"CUDA_VISIBLE_DEVICES": "1"}) == 'DetectedGPUs="GPU-b1223334"\n'
    assert out("-simulate:1,3", "-device", "2") == 'DetectedGPUs="GPU-c2223334"\n'
    by_id = out("-simulate:1,3", environ={"CUDA_VISIBLE_DEVICES": "GPU-c2223334"})
    assert by_id == 'DetectedGPUs="GPU-c2223334"\n'


def test_no_devices() -> None:
    empty = discover([], {}, lambda _: Enumeration(note="NVML cannot start"))
    assert (empty.stdout, empty.exit_code) == ("DetectedGPUs=0\n", 0)
    config = discover(["-config"], {}, lambda _: Enumeration())
    assert config.stdout == "DetectedGPUs=0\nNUM_DETECTED_GPUs=0\n"
    assert discover(["-cron"], {}, lambda _: Enumeration()).stdout == ""


def test_real_devices_come_from_the_reader() -> None:
    card = DeviceRecord(uuid="6a96bd13-70bc-6494-6d62-1b77a9a7f29f", name="TITAN RTX", pci_id="0000:AF:00.0",
                        memory_bytes=24220 * 1024 * 1024, capability=(7, 5), ecc_enabled=False,
                        driver_version=12040, driver="550.54.15", clock_khz=1770000, multiprocessors=72)
    result = discover(["-extra"], {}, lambda _: Enumeration((card,)))
    assert result.stdout.splitlines()[0] == 'DetectedGPUs="GPU-6a96bd13"'
    common = result.stdout.splitlines()[1]
    assert "DriverVersion=12.40; " in common and "MaxSupportedVersion=12040; " in common
    assert 'NvidiaDriver="550.54.15"; ' in common and "ClockMhz=1770.00; " in common


@pytest.mark.parametrize(("args", "message"), [
    (["-bogus"], "option -bogus is not valid"),
    (["-n"], "option -n is not valid"),  # too short for -nested
    (["--prop"], "option --prop is not valid"),  # a double dash wants the whole word
    (["-simulate:9"], "Error: simulation must be in range of 0-8"),
    (["-device"], "Error: -device requires an argument"),
])
def test_refused_command_lines(args: list[str], message: str) -> None:
    result = discover(args, {}, never)
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.splitlines()[0] == message and "Usage:" in result.stderr


def test_help_and_abbreviations() -> None:
    assert discover(["-help"], {}, never).stdout.startswith("Usage: condor_gpu_discovery")
    opts = parse_options(["-prop", "-ext", "-not-nested", "-sim:2,1", "-by-i"])
    assert (opts.properties, opts.extra, opts.nested, opts.simulate, opts.uuid) == (True, True, False, (2,), False)
    assert simulated_enumeration((0, 1)).devices[1].name == "GeForce GTX 480"
