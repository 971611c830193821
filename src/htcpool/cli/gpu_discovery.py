"""``htcpool gpu_discovery``: condor_gpu_discovery, with the same options and output.

The decisions and the text are ``htcpool.gpu.discover``'s; this module only hands it
the command line, the environment (for ``CUDA_VISIBLE_DEVICES``) and the NVML reader,
and prints. See the condor_gpu_discovery manual page and docs/startd.md, "GPUs".
"""

from __future__ import annotations

import os
import sys

from htcpool.gpu import discover
from htcpool.runtime.gpu_nvml import read_devices


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    result = discover(args, os.environ, read_devices, program="htcpool gpu_discovery")
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return result.exit_code
