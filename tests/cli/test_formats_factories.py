"""condor_q -factory's table (``cli/formats/factories.py``)."""

from __future__ import annotations

from htcpool.classad import ClassAd
from htcpool.cli.formats.factories import factory_mode, format_factories

T = 1795000000  # 11/18/26 11:06:40 UTC


def cluster(cluster_id: int, **attrs: object) -> ClassAd:
    return ClassAd({"ClusterId": cluster_id, "Owner": "alice", "QDate": T, "JobsPresent": 2, "JobsRunning": 1,
                    "JobsIdle": 1, "JobsHeld": 0, "JobMaterializeNextProcId": 4, "JobFactoryPaused": 0, **attrs})


def test_one_line_per_factory_under_the_schedd_line_with_htcondors_columns() -> None:
    text = format_factories([cluster(12, JobMaterializeLimit=10, JobMaterializePaused=1), cluster(3)],
                            schedd_name="alice@node1", schedd_address="<127.0.0.1:9618?addrs=x>", now=T, zone=0)
    assert text.split("\n") == [
        "", "",
        "-- Schedd: alice@node1 : <127.0.0.1:9618?... @ 11/18/26 11:06:40",
        " ID      OWNER            SUBMITTED  LIMIT PRESNT   RUN    IDLE   HOLD NEXTID MODE DIGEST",
        "   3.    alice          11/18 11:06             2      1      1      0      4 Norm",
        "  12.    alice          11/18 11:06     10      2      1      1      0      4 Held",
        ""]


def test_the_mode_words() -> None:
    words = [factory_mode(ClassAd({"JobFactoryPaused": m})) for m in (-1, 0, 1, 2, 3, 7)]
    assert words == ["Errs", "Norm", "Held", "Done", "Gone", "Unk"]
    assert factory_mode(ClassAd({"JobMaterializePaused": 1, "JobFactoryPaused": 0})) == "Held"
    assert factory_mode(ClassAd()) == ""
