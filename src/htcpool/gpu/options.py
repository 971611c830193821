"""condor_gpu_discovery's command line, read as the tool reads it.

Options are single-dash words that may be shortened to a minimum prefix (``-prop``
for ``-properties``; the minimum is in ``_OPTIONS``); a double dash asks for the
whole word. They are tried in the tool's order, so ``-n`` is refused (too short for
``-nested``) rather than taken for something else. ``-simulate:D,N`` carries its
value after a colon; ``-tag``, ``-prefix`` and ``-device`` take the next word;
``-repeat`` and ``-divide`` take the next word when it is not another option.

An unknown option is a ``DiscoveryOptionError`` whose message is the tool's
``option X is not valid`` (the tool then prints its usage, ``USAGE``, and exits 1).
``-opencl``, ``-hip``, ``-nvcuda``, ``-cudart`` are accepted; htcpool reads NVIDIA
devices through NVML only, so they change nothing but what the tool would prefer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from htcpool.gpu.devices import parse_simulate
from htcpool.gpu.errors import DiscoveryOptionError


@dataclass(slots=True)
class DiscoveryOptions:
    """What one command line asks of discovery."""

    help: bool = False
    properties: bool = False  # -properties (implied by -extra and -dynamic)
    extra: bool = False
    dynamic: bool = False
    nested: bool = True
    cron: bool = False
    mixed: bool = False  # -mixed / -hetero: never fold properties into Common
    config: bool = False
    tag: str = "GPUs"
    prefix: str | None = None  # -prefix; None: CUDA
    uuid: bool | None = None  # None: the default, short uuids
    short_uuid: bool | None = None
    simulate: tuple[int, ...] | None = None
    repeat: int = 0
    divide: bool = False
    packed: bool = False
    devices: list[str] = field(default_factory=list)  # -device <N>, comma lists allowed
    verbose: bool = False
    diagnostic: bool = False
    dirty_environment: bool = False
    opencl: bool = False
    hip: bool = False
    cuda: bool = False


#: (option, least characters that select it; -1: the whole word), in the tool's order
_OPTIONS: tuple[tuple[str, int], ...] = (
    ("help", 1), ("properties", 1), ("extra", 3), ("nested", 2), ("not-nested", 6), ("no-nested", 5),
    ("dynamic", 3), ("cron", 4), ("mixed", 3), ("hetero", 3), ("opencl", -1), ("cuda", -1), ("hip", -1),
    ("verbose", 4), ("diagnostic", 4), ("repeat", -1), ("divide", -1), ("packed", -1), ("config", -1),
    ("tag", 3), ("by-index", 4), ("uuid", 2), ("short-uuid", -1), ("prefix", 3), ("device", 3),
    ("simulate", 3), ("nvcuda", -1), ("cudart", 6), ("dirty-environment", 4),
)


def _selects(arg: str, word: str, least: int) -> bool:
    """Whether ``arg`` (without its dashes) is an accepted abbreviation of ``word``."""
    if not arg or not word.startswith(arg):
        return False
    if least < 0:
        return arg == word
    return len(arg) >= least


def _which(raw: str) -> tuple[str | None, str | None]:
    """The option ``raw`` names and the value after its colon (``-simulate:1,2``)."""
    if not raw.startswith("-") or raw == "-":
        return None, None
    body = raw[1:]
    exact = body.startswith("-")
    if exact:
        body = body[1:]
    name, colon, value = body.partition(":")
    for word, least in _OPTIONS:
        if colon and word != "simulate":
            continue
        if _selects(name, word, -1 if exact else least):
            return word, (value if colon else None)
    return None, None


def _count_after(args: Sequence[str], i: int, current: int) -> tuple[int, int]:
    """-repeat/-divide: (N, index of the last word used); a missing N keeps ``current`` or is 2."""
    if i + 1 < len(args) and not args[i + 1].startswith("-"):
        try:
            return int(args[i + 1]), i + 1
        except ValueError:
            return 0, i + 1
    return (current or 2), i


_FLAGS: dict[str, tuple[tuple[str, object], ...]] = {
    "properties": (("properties", True),),
    "extra": (("properties", True), ("extra", True)),
    "nested": (("nested", True),),
    "not-nested": (("nested", False),),
    "no-nested": (("nested", False),),
    "dynamic": (("properties", True), ("dynamic", True), ("opencl", False)),
    "cron": (("cron", True),),
    "mixed": (("mixed", True),),
    "hetero": (("mixed", True),),
    "opencl": (("opencl", True), ("dynamic", False)),
    "cuda": (("cuda", True),),
    "hip": (("hip", True),),
    "verbose": (("verbose", True),),
    "diagnostic": (("diagnostic", True),),
    "packed": (("packed", True),),
    "config": (("config", True),),
    "by-index": (("uuid", False), ("short_uuid", False)),
    "uuid": (("uuid", True), ("short_uuid", False)),
    "short-uuid": (("uuid", True), ("short_uuid", True)),
    "nvcuda": (),
    "cudart": (),
    "dirty-environment": (("dirty_environment", True),),
}


def parse_options(args: Sequence[str]) -> DiscoveryOptions:
    """Read a condor_gpu_discovery command line (without the program name)."""
    opts = DiscoveryOptions()
    i = 0
    while i < len(args):
        raw = args[i]
        word, value = _which(raw)
        if word is None:
            raise DiscoveryOptionError(f"option {raw} is not valid")
        if word == "help":
            opts.help = True
            return opts
        if word in _FLAGS:
            for attr, setting in _FLAGS[word]:
                setattr(opts, attr, setting)
        elif word in ("repeat", "divide"):
            opts.repeat, i = _count_after(args, i, opts.repeat)
            opts.divide = word == "divide"
        elif word in ("tag", "prefix"):
            if i + 1 < len(args):
                i += 1
                if word == "prefix" and len(args[i]) > 80:
                    raise DiscoveryOptionError("Error: -prefix should be less than 80 characters")
                setattr(opts, word, args[i])
        elif word == "device":
            if i + 1 >= len(args) or args[i + 1].startswith("-"):
                raise DiscoveryOptionError("Error: -device requires an argument")
            i += 1
            opts.devices.extend(d.strip() for d in args[i].split(",") if d.strip())
        elif word == "simulate":
            opts.simulate = (opts.simulate or ()) + parse_simulate(value)
        i += 1
    return opts


USAGE = """Usage: {argv0} [options]
Options (each may be shortened; see the condor_gpu_discovery manual page):
    -properties        also print each device's matchmaking properties
    -extra             also print clock, compute units and cores per unit
    -dynamic           also print NVML readings (fan, power, temperature, ECC errors)
    -mixed             never gather equal properties into Common
    -nested            properties as nested ads, one per device (the default)
    -not-nested        properties as prefixed attributes
    -device <N>        only device N (repeatable; adds to CUDA_VISIBLE_DEVICES)
    -tag <name>        print Detected<name> instead of DetectedGPUs
    -prefix <text>     prefix of -by-index ids and -not-nested attributes (CUDA)
    -cuda | -hip | -opencl   which library to prefer (htcpool reads NVML)
    -uuid              full NVIDIA uuids as device ids
    -short-uuid        GPU-<first 8 hex digits> as device ids (the default)
    -by-index          <prefix><index> as device ids
    -simulate[:D[,N[,D2,N2...]]]  pretend to find N devices of kind D:
                       0 GeForce GT 330        4 A100-SXM4-40GB
                       1 GeForce GTX 480       5 A100 in MIG mode, 3g.20gb
                       2 Tesla V100-PCIE-16GB  6 A100 in MIG mode, 1g.5gb
                       3 TITAN RTX             7 A100 in MIG mode, 3g.20gb (driver 11.4)
    -config            print configuration syntax, with NUM_DETECTED_<tag>
    -repeat [N]        list every device N times (2 when N is left out)
    -divide [N]        as -repeat, and divide GlobalMemoryMb by N
    -packed            repeat each device in place rather than the whole list
    -cron              leave out Detected<tag> (for STARTD_CRON with -dynamic)
    -verbose | -diagnostic   say more about what detection does
    -dirty-environment keep CUDA_VISIBLE_DEVICES and friends while detecting
    -help              print this and exit
"""


__all__ = ["USAGE", "DiscoveryOptions", "parse_options"]
