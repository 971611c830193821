"""Which schedd ``-name`` names among the collector's Scheduler ads (cli/locate.py)."""

from htcpool.classad import ClassAd
from htcpool.cli.locate import pick_schedd

ADS = [ClassAd({"Name": "alice@node1"}), ClassAd({"Name": "B@node1"}), ClassAd({"Name": "C@node2"})]


def test_whole_name_then_either_side_of_the_at_when_only_one_has_it() -> None:
    assert pick_schedd(ADS, "b@NODE1") is ADS[1]  # names compare without case
    assert pick_schedd(ADS, "B") is ADS[1]
    assert pick_schedd(ADS, "node2") is ADS[2]
    assert pick_schedd(ADS, "node1") is None  # two schedds run there: not a name of one
    assert pick_schedd(ADS, "nosuch") is None
    assert pick_schedd([], "B") is None
