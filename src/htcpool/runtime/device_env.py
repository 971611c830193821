"""The variables that tell a job which devices its slot holds, from the startd's knobs.

``DeviceEnvironment`` keeps ``ENVIRONMENT_FOR_Assigned<name>``,
``ENVIRONMENT_VALUE_FOR_UnAssigned<name>`` and ``AUTO_SET_NVIDIA_VISIBLE_DEVICES`` as the
startd read them, and gives each job its variables through
``htcpool.gpu.assigned_environment`` (``CUDA_VISIBLE_DEVICES``, ``_CONDOR_AssignedGPUs``,
``GPU_DEVICE_ORDINAL``, ``NVIDIA_VISIBLE_DEVICES``); the startd lays them over the job's
own environment when it launches the job (``launch_spec``'s ``extra_env``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from htcpool.classad import ClassAd
from htcpool.config import Config
from htcpool.gpu import assigned_environment

log = logging.getLogger("htcpool.startd")


@dataclass(frozen=True, slots=True)
class DeviceEnvironment:
    """The startd's knobs for the variables that tell a job its devices."""

    knobs: dict[str, str] = field(default_factory=dict)  # ENVIRONMENT_FOR_Assigned<name>
    unassigned: dict[str, str] = field(default_factory=dict)  # ENVIRONMENT_VALUE_FOR_UnAssigned<name>
    set_nvidia: bool = True  # AUTO_SET_NVIDIA_VISIBLE_DEVICES

    @classmethod
    def from_config(cls, config: Config, resources: Iterable[str]) -> DeviceEnvironment:
        knobs, unassigned = {}, {}
        for tag in resources:
            knob = config.get_str(f"ENVIRONMENT_FOR_Assigned{tag}", subsystem="STARTD")
            if knob:
                knobs[tag] = knob
            value = config.get_str(f"ENVIRONMENT_VALUE_FOR_UnAssigned{tag}", subsystem="STARTD")
            if value is not None:
                unassigned[tag] = value
        flag = config.get_bool("AUTO_SET_NVIDIA_VISIBLE_DEVICES", subsystem="STARTD")
        return cls(knobs, unassigned, True if flag is None else flag)

    def for_slot(self, slot_ad: ClassAd) -> dict[str, str]:
        """The variables for a job on the slot with this ad; a bad knob is logged and skipped."""
        env, problems = assigned_environment(slot_ad, self.knobs, self.unassigned, self.set_nvidia)
        for problem in problems:
            log.warning("%s", problem)
        return env
