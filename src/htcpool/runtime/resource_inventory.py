"""Running the startd's ``MACHINE_RESOURCE_INVENTORY_<tag>`` commands.

At its start the startd asks each inventory command what resource ``tag`` the machine
has (admin manual, "MACHINE_RESOURCE_INVENTORY_<name>"). A command that runs
condor_gpu_discovery (``use feature : GPUs`` writes ``$(LIBEXEC)/condor_gpu_discovery
-properties $(GPU_DISCOVERY_EXTRA)``) or ``htcpool gpu_discovery`` is answered in
process by htcpool's own discovery (``htcpool.gpu.discover`` over NVML); any other
command is run, without a shell, for at most ``INVENTORY_TIMEOUT`` seconds.

A command that cannot run, fails, or prints something that is not an inventory is
logged in StartdLog with the reason and leaves the machine without that resource;
the startd goes on.
"""

from __future__ import annotations

import logging
import shlex
import subprocess
from collections.abc import Mapping

from htcpool.gpu import (
    InventoryError,
    InventoryReading,
    discover,
    discovery_arguments,
    read_inventory,
)
from htcpool.runtime.gpu_nvml import read_devices
from htcpool.startd import StartdSettings

log = logging.getLogger("htcpool.startd")

#: the longest an inventory command may run
INVENTORY_TIMEOUT = 60.0


def _run(command: str, environ: Mapping[str, str]) -> tuple[int, str, str]:
    """(exit status, output, error text) of one inventory command."""
    args = discovery_arguments(command)
    if args is not None:
        result = discover(args, environ, read_devices)
        return result.exit_code, result.stdout, result.stderr
    try:
        done = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=INVENTORY_TIMEOUT,
                              env=dict(environ), check=False)
    except (OSError, ValueError, subprocess.TimeoutExpired) as e:
        return 127, "", str(e)
    return done.returncode, done.stdout, done.stderr


def run_inventories(settings: StartdSettings, environ: Mapping[str, str]) -> list[InventoryReading]:
    """What every inventory command reports; failures are logged and left out."""
    readings = []
    for tag, command in settings.resource_inventory.items():
        knob = f"MACHINE_RESOURCE_INVENTORY_{tag}"
        status, out, err = _run(command, environ)
        if status != 0:
            first = (err.strip().splitlines() or ["no message"])[0]
            log.warning("%s = %s failed (exit status %d: %s); the machine has no %s", knob, command, status,
                        first, tag)
            continue
        try:
            reading = read_inventory(tag, out, settings.offline_resources.get(tag, ()))
        except InventoryError as e:
            log.warning("%s = %s: %s; the machine has no %s", knob, command, e, tag)
            continue
        found = ", ".join(reading.ids) if reading.count is None else str(reading.count)
        log.info("%s found %d %s: %s", knob, reading.total, tag, found or "none")
        readings.append(reading)
    return readings


__all__ = ["INVENTORY_TIMEOUT", "run_inventories"]
