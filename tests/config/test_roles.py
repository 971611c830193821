"""``use ROLE : …`` and the knobs a pool across hosts is set up with, compared with HTCondor's reader."""

from __future__ import annotations

import pytest

from htcpool.config import Config
from tests.config.reference_reader import ReferenceReader

NAMES = ["DAEMON_LIST", "CONDOR_HOST", "COLLECTOR_HOST", "BIND_ALL_INTERFACES", "NETWORK_INTERFACE",
         "RunBenchmarks"]


@pytest.mark.parametrize("text", [
    "use ROLE : CentralManager\nCONDOR_HOST = 198.18.0.1\n",
    "use ROLE : Submit\nCONDOR_HOST = cm.example.org\nTRUST_DOMAIN = cm.example.org\n",
    "use ROLE : Execute\nCONDOR_HOST = 198.18.0.1\nNETWORK_INTERFACE = 198.18.0.3\nBIND_ALL_INTERFACES = false\n",
    "use ROLE : CentralManager, Submit\nCONDOR_HOST = 198.18.0.1\nCOLLECTOR_HOST = $(CONDOR_HOST):9620\n",
    "use ROLE : Personal\n",
])
def test_roles_read_as_htcondor_reads_them(reference: ReferenceReader, text: str) -> None:
    answers = reference.values(text, NAMES)
    ours = Config.from_text(text, subsystem="MASTER", environ={})
    for name in NAMES:
        kind, value = answers[name]
        mine = ours.get_str(name)
        if kind == "missing":
            assert mine is None, (name, mine)
        elif kind == "bool":
            assert ours.get_bool(name) is value, (name, mine)
        else:
            assert " ".join(str(mine).replace(",", " ").split()) == " ".join(str(value).replace(",", " ").split()), \
                (name, mine, value)
