"""Reading the simulated pool's configuration: the pool's condor_config, ``--set`` overrides and
each machine class's knobs.

Every daemon reads the same file a live pool would (``CONDOR_CONFIG`` is the given path), as its
own subsystem (``NEGOTIATOR``, ``SCHEDD``, ``STARTD``, ``COLLECTOR``), with the overrides read
after it, as if they were the file's last lines, and, for a startd, its machine class's knobs
(``NUM_CPUS``, ``MEMORY`` …) after those. The machine facts are fixed (``fake_machine``) and the
environment empty, so a configuration reads the same on any host; ``$EVAL(time())`` sees the
simulation's start. A configuration that cannot be read raises ``SimInputError`` naming the
file and line; so does a machine class whose knobs the startd refuses.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from htcpool.config import Config, ConfigError, FileLoader, fake_machine
from htcpool.config.errors import ConfigInputError
from htcpool.config.files import assemble
from htcpool.runtime.machine_attrs import platform_attributes
from htcpool.sim.errors import SimInputError
from htcpool.sim.machines import MachineClass
from htcpool.startd import StartdError, StartdSettings, settings_from_config


def read_pool_config(path: Path, overrides: tuple[tuple[str, str], ...], subsystem: str, epoch: float,
                     knobs: tuple[tuple[str, str], ...] = (), where: str = "") -> Config:
    """The configuration ``subsystem`` reads (see the module docstring)."""
    if not path.is_file():
        raise SimInputError(path, None, "no such configuration file")
    roots: list[tuple[str, str | None]] = [(str(path), None)]
    if overrides:
        roots.append(("--set", "".join(f"{name} = {value}\n" for name, value in overrides)))
    if knobs:
        roots.append((where or "machine file", "".join(f"{name} = {value}\n" for name, value in knobs)))
    try:
        return assemble(roots, subsystem=subsystem, local_name=None, environ={"CONDOR_CONFIG": str(path)},
                        facts=fake_machine(), loader=FileLoader(), config_root=str(path.parent.resolve()),
                        cwd=str(path.parent.resolve()), clock=lambda: epoch)
    except ConfigInputError as e:
        raise SimInputError(e.source or path, e.line or None, e.message) from None
    except ConfigError as e:
        raise SimInputError(path, None, str(e)) from None


def startd_settings(path: Path, overrides: tuple[tuple[str, str], ...], machine: MachineClass,
                    epoch: float) -> StartdSettings:
    """The startd settings of one machine class: the pool's policy, sized by the class's knobs,
    with the machine's platform attributes and the class's own attributes. The host running the
    simulation is not probed (its container runtimes are no simulated machine's): a simulated
    machine has ``HasDocker`` and the like only from its machine file."""
    config = read_pool_config(path, overrides, "STARTD", epoch, machine.knobs, machine.where)
    try:
        settings = settings_from_config(config)  # type: ignore[arg-type]
    except (StartdError, ConfigError, ValueError) as e:
        raise SimInputError(machine.where or path, None, f"the startd cannot use this machine: {e}") from None
    attrs: dict[str, Any] = platform_attributes(config)
    attrs.update(dict(machine.attributes))
    return replace(settings, machine_attrs=attrs)


def interval(config: Config, knob: str, default: float) -> float:
    value = config.get_float(knob)
    return float(value) if value is not None and value > 0 else default


__all__ = ["interval", "read_pool_config", "startd_settings"]
