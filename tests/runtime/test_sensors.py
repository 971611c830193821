"""Sensors: scripted readings over a fallback, and the host's own devices."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from htcpool.protocol.startd import SensorReadings
from htcpool.runtime.sensors import FixedSensors, HostSensors, ScriptedSensors, newest_access

NOW = 1_700_000_000.0
BASE = SensorReadings(load_avg=0.5, keyboard_idle=900.0, console_idle=1200.0, memory=4096,
                      disk=10_000_000, swap=2_000_000)


def scripted(tmp_path: Path, content: str | None) -> ScriptedSensors:
    path = tmp_path / "sensors.json"
    if content is not None:
        path.write_text(content)
    return ScriptedSensors(path, FixedSensors(BASE))


def test_scripted_values_override_the_fallback(tmp_path: Path) -> None:
    script = {"load_avg": 1.75, "keyboard_active_at": NOW - 30, "console_active_at": NOW - 45.5,
              "memory": 2048, "disk": 5000, "swap": 7}
    readings = scripted(tmp_path, json.dumps(script)).read(NOW)
    assert readings == SensorReadings(load_avg=1.75, keyboard_idle=30.0, console_idle=45.5,
                                      memory=2048, disk=5000, swap=7)


def test_missing_keys_come_from_the_fallback(tmp_path: Path) -> None:
    readings = scripted(tmp_path, '{"keyboard_active_at": %f}' % (NOW - 5)).read(NOW)
    assert readings.keyboard_idle == 5.0
    assert (readings.load_avg, readings.console_idle, readings.memory) == (0.5, 1200.0, 4096)


def test_activity_in_the_future_is_zero_idle(tmp_path: Path) -> None:
    assert scripted(tmp_path, '{"console_active_at": %f}' % (NOW + 60)).read(NOW).console_idle == 0.0


@pytest.mark.parametrize("content", [None, "", "{not json", "[1, 2, 3]", '"text"', "\x00\xff"])
def test_absent_or_malformed_file_gives_the_fallback(tmp_path: Path, content: str | None) -> None:
    assert scripted(tmp_path, content).read(NOW) == BASE


def test_values_of_the_wrong_type_are_ignored(tmp_path: Path) -> None:
    content = '{"load_avg": "high", "memory": true, "disk": null, "keyboard_active_at": [1], "swap": 3}'
    readings = scripted(tmp_path, content).read(NOW)
    assert readings == SensorReadings(load_avg=0.5, keyboard_idle=900.0, console_idle=1200.0,
                                      memory=4096, disk=10_000_000, swap=3)


def test_the_file_is_read_again_on_every_call(tmp_path: Path) -> None:
    sensors = scripted(tmp_path, '{"load_avg": 2.0}')
    assert sensors.read(NOW).load_avg == 2.0
    (tmp_path / "sensors.json").write_text('{"load_avg": 0.25}')
    assert sensors.read(NOW).load_avg == 0.25
    (tmp_path / "sensors.json").unlink()
    assert sensors.read(NOW).load_avg == 0.5


def test_default_fallback_is_empty_readings(tmp_path: Path) -> None:
    assert ScriptedSensors(str(tmp_path / "absent.json")).read(NOW) == SensorReadings()


def test_condor_load_is_left_to_the_startd(tmp_path: Path) -> None:
    assert HostSensors(str(tmp_path)).read(time.time()).condor_load == {}
    assert scripted(tmp_path, '{"load_avg": 1}').read(NOW).condor_load == {}


def test_host_sensors_measure_this_machine(tmp_path: Path) -> None:
    readings = HostSensors(str(tmp_path), device_dir=str(tmp_path / "no-devices")).read(time.time())
    assert readings.load_avg >= 0.0
    assert readings.memory is not None and readings.memory > 0
    assert readings.disk is not None and readings.disk > 0
    assert readings.console_idle is None


def test_host_sensors_without_an_execute_directory_report_no_disk(tmp_path: Path) -> None:
    assert HostSensors(str(tmp_path / "absent")).read(time.time()).disk is None


def test_console_idle_comes_from_input_devices(tmp_path: Path) -> None:
    devices = tmp_path / "dev" / "input"
    devices.mkdir(parents=True)
    for name, age in (("event0", 300.0), ("mice", 40.0)):
        (devices / name).touch()
        os.utime(devices / name, (NOW - age, NOW - age))
    readings = HostSensors(str(tmp_path), device_dir=str(tmp_path / "dev")).read(NOW)
    assert readings.console_idle == pytest.approx(40.0)
    assert readings.keyboard_idle is not None and readings.keyboard_idle <= 40.0


def test_newest_access_skips_what_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "a").touch()
    os.utime(tmp_path / "a", (NOW, NOW))
    assert newest_access([str(tmp_path / "missing"), str(tmp_path / "a")]) == NOW
    assert newest_access([str(tmp_path / "missing")]) is None
