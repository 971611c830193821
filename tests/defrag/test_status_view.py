"""``htcpool status -defrag``: HTCondor's Defrag view (Name as wide as the longest, Draining, Peak,
TotalDrained)."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.cli.status import DAEMON_VIEWS, format_daemons


def test_defrag_view_columns() -> None:
    ads = [ClassAd({"MyType": "Defrag", "Name": "DEFRAG@cm.example.org", "MachinesDraining": 3,
                    "MachinesDrainingPeak": 7, "DrainedMachines": 12})]
    my_type, columns = DAEMON_VIEWS["defrag"]
    assert my_type == "Defrag"
    assert format_daemons(ads, columns).splitlines() == [
        "Name                  Draining     Peak TotalDrained",
        "",
        "DEFRAG@cm.example.org        3        7           12",
    ]
