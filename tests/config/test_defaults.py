"""Every default of the parameter table against HTCondor's own reader of an empty file."""

from __future__ import annotations

import os

from htcpool.config import Config, probe_machine
from htcpool.config.table import all_params
from tests.config.reference_reader import ReferenceReader

#: Defaults that cannot agree, and why.
EXCEPTED = {
    "PERIODIC_CHECKPOINT": "contains $RANDOM_INTEGER(), different on every read",
    "CONDOR_BUILD_PLATFORM": "a compile-time macro of the HTCondor build",
    "PYTHON3_MODULE_SUFFIX": "a compile-time macro of the HTCondor build",
    "PYTHON3_VERSION_MINOR": "a compile-time macro of the HTCondor build",
    "HAVE_EXT_KRB5": "a compile-time macro of the HTCondor build",
    "SEC_DEFAULT_AUTHENTICATION_METHODS": "the build's list of compiled-in methods wins",
    "TRANSFER_JOB_ATTRS": "the installed wheel (25.14.1) has a newer table than the docs copy",
    "ADSTASH_SE_INDEX_NAME": "the installed wheel (25.14.1) has a newer table than the docs copy",
    "ENABLE_CLASSAD_CACHING": "the installed wheel has a TOOL-specific default not in the docs copy",
}


def _same(mine: object, theirs: object) -> bool:
    if isinstance(mine, float) and isinstance(theirs, float):
        return abs(mine - theirs) <= 1e-9 * max(1.0, abs(theirs))
    return type(mine) is type(theirs) and mine == theirs


def test_every_default_matches_the_reference(reference: ReferenceReader) -> None:
    names = [info.name for info in all_params() if "." not in info.name]
    answers = reference.values("", names)
    assert "__error__" not in answers
    # the defaults, without the suite's own settings (tests/conftest.py sets _CONDOR_DISABLE_SETUID)
    environ = {k: v for k, v in os.environ.items() if not k.startswith("_CONDOR_")}
    config = Config.from_text("", facts=probe_machine(), environ=environ)
    differences = []
    for name in names:
        if name in EXCEPTED:
            continue
        kind, theirs = answers[name]
        if kind == "missing":
            theirs = None
        mine = config.get_typed(name)
        if not _same(mine, theirs):
            differences.append(f"{name}: htcpool {mine!r} != HTCondor {theirs!r}")
    assert not differences, "\n".join(differences)
    assert len(names) > 1000
