"""Reading machines and workloads: each format, and malformed input named by file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.sim.errors import SimInputError
from htcpool.sim.machines import read_machines
from htcpool.sim.workload import DEFAULT_RUNTIME, Workload
from tests.sim.pool_files import EPOCH, swf_line, write_swf

# --------------------------------------------------------------------------- machines


def test_compact_machine_file(tmp_path: Path) -> None:
    path = tmp_path / "m.txt"
    path.write_text("# the pool\n\n100 NUM_CPUS=16 MEMORY=65536\n"
                    '4 NUM_CPUS=64 MEMORY=262144 GPUs=4 HasDocker=true Site="uw madison"\n')
    small, big = read_machines(path)
    assert small.count == 100 and small.knobs == (("NUM_CPUS", "16"), ("MEMORY", "65536"))
    assert big.count == 4
    assert dict(big.knobs) == {"NUM_CPUS": "64", "MEMORY": "262144", "MACHINE_RESOURCE_GPUs": "4"}
    assert dict(big.attributes) == {"HasDocker": True, "Site": "uw madison"}
    assert big.where == f"{path}:4"


@pytest.mark.parametrize(("line", "reason"), [
    ("x NUM_CPUS=4", "positive count"),
    ("0 NUM_CPUS=4", "positive count"),
    ("3 NUM_CPUS=four", "NUM_CPUS must be a number"),
    ("3 NUM_CPUS=4 junk", "expected NAME=VALUE"),
    ("3 Site=[", "not a ClassAd value"),
])
def test_malformed_machine_lines_name_file_and_line(tmp_path: Path, line: str, reason: str) -> None:
    path = tmp_path / "m.txt"
    path.write_text(f"1 NUM_CPUS=2\n{line}\n")
    with pytest.raises(SimInputError, match=reason) as info:
        read_machines(path)
    assert str(info.value).startswith(f"{path}:2:")


def test_status_dump_folds_slots_into_machines(tmp_path: Path) -> None:
    path = tmp_path / "status.txt"
    ad = ('Machine = "{m}"\nName = "slot1@{m}"\nState = "Claimed"\nRemoteUser = "bob@x"\n'
          'TotalCpus = 8\nTotalMemory = 16384\nTotalDisk = 1000000\nCpus = 8\nMemory = 16384\n'
          'PartitionableSlot = true\nArch = "X86_64"\nHasDocker = true\nMachineResources = "Cpus Memory Disk"\n')
    path.write_text(ad.format(m="a.example") + "\n" + ad.format(m="b.example") + "\n"
                    + ad.format(m="c.example").replace("TotalCpus = 8", "TotalCpus = 4"))
    classes = sorted(read_machines(path), key=lambda c: c.count)
    assert [(c.count, dict(c.knobs)["NUM_CPUS"]) for c in classes] == [(1, "4"), (2, "8")]
    attrs = dict(classes[1].attributes)
    assert attrs["HasDocker"] is True and "State" not in attrs and "RemoteUser" not in attrs
    assert classes[1].names == ("a.example", "b.example")


def test_status_dump_without_resources_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "status.txt"
    path.write_text('Machine = "a"\nName = "slot1@a"\n')
    with pytest.raises(SimInputError, match=r"status.txt:1: a slot ad without TotalCpus"):
        read_machines(path)

# --------------------------------------------------------------------------- SWF


def test_swf_fields_become_job_attributes(tmp_path: Path) -> None:
    path = write_swf(tmp_path / "t.swf", [
        "7 30 12 100 4 90 2048 4 200 1024 1 3 2 5 1 1 -1 -1",
        swf_line(8, 40, 50, user=4),
    ])
    workload = Workload(path)
    assert workload.epoch == EPOCH
    first, second = list(workload)
    assert (first.time, first.owner) == (30, "u3")
    ad = first.ads[0]
    assert ad["SimRuntime"] == 100 and ad["RequestCpus"] == 4 and ad["RequestMemory"] == 4  # 1024 KB × 4
    assert ad["AccountingGroup"] == "group_g2.u3"
    assert (ad["SwfJobNumber"], ad["SwfWaitTime"], ad["SwfRequestedTime"], ad["SwfExecutable"]) == (7, 12, 200, 5)
    assert second.ads[0].get("AccountingGroup") is None and second.owner == "u4"


def test_swf_partial_executions_and_unknown_runtimes_are_not_replayed(tmp_path: Path) -> None:
    path = write_swf(tmp_path / "t.swf", [
        swf_line(1, 0, 10, user=1, status=2),
        swf_line(1, 0, 30, user=1, status=1),
        swf_line(2, 5, -1, user=1, status=5),
    ])
    assert [a.ads[0]["SimRuntime"] for a in Workload(path)] == [30]


def test_malformed_swf_lines_raise_or_are_counted(tmp_path: Path) -> None:
    path = write_swf(tmp_path / "t.swf", [swf_line(1, 0, 10, user=1), "2 5 -1 10", swf_line(3, 9, 10, user=1),
                                          swf_line(4, 9, 10, user=1).replace(" 10 ", " ten ", 1)])
    with pytest.raises(SimInputError) as info:
        list(Workload(path))
    assert str(info.value) == f"{path}:4: an SWF line has 18 fields, this one 4"
    workload = Workload(path, skip_bad=True)
    assert len(list(workload)) == 2 and workload.skipped == 2

# --------------------------------------------------------------------------- history and submit files


HISTORY = '''Owner = "alice"
QDate = 1700000500
RemoteWallClockTime = 120.0
RequestCpus = 2
RequestMemory = 512
AccountingGroup = "group_physics.alice"
ClusterId = 2
JobPrio = 5

Owner = "bob"
QDate = 1700000100
CompletionDate = 1700000400
JobCurrentStartDate = 1700000300
ClusterId = 1
'''


def test_history_jobs_arrive_in_qdate_order(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    path.write_text(HISTORY)
    workload = Workload(path)
    assert workload.kind == "history" and workload.epoch == 1700000100
    bob, alice = list(workload)
    assert (bob.owner, bob.time, bob.ads[0]["SimRuntime"]) == ("bob", 0, 100)
    assert (alice.owner, alice.time, alice.ads[0]["SimRuntime"]) == ("alice", 400, 120)
    assert alice.ads[0]["AccountingGroup"] == "group_physics.alice" and alice.ads[0]["JobPrio"] == 5


def test_history_ad_without_qdate(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    path.write_text(HISTORY.replace("QDate = 1700000100\n", ""))
    with pytest.raises(SimInputError, match=r"history.txt:10: a job ad without QDate"):
        Workload(path)
    assert Workload(path, skip_bad=True).skipped == 1


def test_submit_file_runtimes(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sub"
    path.write_text("executable = /bin/work\nrequest_cpus = 1\n+SimRuntime = 100 + $(Process) * 10\nqueue 3\n")
    (arrival,) = list(Workload(path))
    assert [ad.evaluate("SimRuntime") for ad in arrival.ads] == [100, 110, 120]
    path.write_text("executable = /bin/work\nqueue 1\n")
    (arrival,) = list(Workload(path))
    assert arrival.ads[0]["SimRuntime"] == DEFAULT_RUNTIME


def test_bad_submit_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "jobs.sub"
    path.write_text("executable = /bin/work\nqueue 1 in (a b\n")
    with pytest.raises(SimInputError, match=str(path)):
        list(Workload(path))


def _history_file(path: Path, jobs: list[tuple[int, int, int]]) -> None:
    """Ads of jobs (cluster, QDate, CompletionDate), newest completion first, as condor_history writes."""
    ads = [f'Owner = "u{c % 3}"\nClusterId = {c}\nQDate = {q}\nJobCurrentStartDate = {q}\n'
           f"CompletionDate = {d}\nRemoteWallClockTime = {d - q}.0\n"
           for c, q, d in sorted(jobs, key=lambda j: (-j[2], -j[0]))]
    path.write_text("\n".join(ads))


def test_a_history_file_is_read_backwards_in_submit_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """500 jobs of 10 to 60 s each, submitted every 7 s, and a QDate tie: read backwards in small
    chunks, the stream hands them out in the order the in-memory sort gives (QDate, then file order)."""
    from htcpool.sim import history

    jobs = [(c, 1_700_000_000 + 7 * c, 1_700_000_000 + 7 * c + 10 + (c * 37) % 51) for c in range(1, 501)]
    jobs.append((501, 1_700_000_000 + 7 * 250, 1_700_000_000 + 7 * 250 + 30))  # a QDate tie
    path = tmp_path / "history.txt"
    _history_file(path, jobs)
    monkeypatch.setattr(history, "CHUNK", 97)  # many chunk boundaries inside lines
    streamed = Workload(path)
    assert streamed._scan.streamable and streamed.epoch == 1_700_000_007
    got = [(a.time, a.ads[0]["ClusterId"]) for a in streamed]
    monkeypatch.setattr(history, "scan", lambda p: history.HistoryScan(None, 0.0, 0, False))
    monkeypatch.setattr("htcpool.sim.workload.scan", history.scan)
    sorted_in_memory = Workload(path)
    assert not sorted_in_memory._scan.streamable
    assert got == [(a.time, a.ads[0]["ClusterId"]) for a in sorted_in_memory]
    assert len(got) == 501 and got[0] == (0.0, 1)


def test_the_stream_holds_only_jobs_whose_stays_overlap() -> None:
    from htcpool.sim.history import in_submit_order

    consumed = 0

    def records():  # type: ignore[no-untyped-def]
        nonlocal consumed
        for i in range(1000):  # a job every 10 s, each staying 25 s: about three overlap
            consumed += 1
            yield float(10 * i + 25), float(10 * i), i, i

    held = []
    out = []
    for item in in_submit_order(records(), span=25.0):
        held.append(consumed - len(out))
        out.append(item)
    assert out == list(range(1000)) and max(held) <= 4


def test_a_history_file_not_newest_first_is_sorted_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    jobs = [(1, 1_700_000_000, 1_700_000_060), (2, 1_700_000_050, 1_700_000_100)]
    ads = [f'Owner = "u"\nClusterId = {c}\nQDate = {q}\nCompletionDate = {d}\nRemoteWallClockTime = 1.0\n'
           for c, q, d in jobs]  # oldest completion first: not as condor_history writes
    path.write_text("\n".join(ads))
    workload = Workload(path)
    assert not workload._scan.streamable
    assert [a.time for a in workload] == [0.0, 50.0]


def test_a_bad_ad_in_a_streamed_history_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "history.txt"
    _history_file(path, [(1, 1_700_000_000, 1_700_000_100), (2, 1_700_000_050, 1_700_000_060)])
    path.write_text(path.read_text().replace('Owner = "u2"\n', ""))
    with pytest.raises(SimInputError, match=r"history.txt:8: a job ad without QDate or Owner"):
        list(Workload(path))
    workload = Workload(path, skip_bad=True)
    assert [a.owner for a in workload] == ["u1"] and workload.skipped == 1


def test_a_simulated_machine_is_not_given_the_hosts_container_runtimes(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulated pool must read the same on any host: the container runtimes of the machine
    running the simulation are not probed; only the machine file gives ``HasDocker`` and the like."""
    import htcpool.runtime.container_probe as container_probe
    from htcpool.sim.machines import MachineClass
    from htcpool.sim.setup import startd_settings

    def host_probe(config: object) -> dict[str, object]:
        raise AssertionError("the simulator probed the host's container runtimes")

    monkeypatch.setattr(container_probe, "probe_machine", host_probe)
    monkeypatch.setattr("htcpool.runtime.machine_attrs.probe_machine", host_probe)
    config = tmp_path / "condor_config"
    config.write_text("use FEATURE : PartitionableSlot\n")
    plain = startd_settings(config, (), MachineClass(1, (("NUM_CPUS", "4"),)), EPOCH)
    assert "HasDocker" not in plain.machine_attrs and "OfflineUniverses" not in plain.machine_attrs
    assert plain.machine_attrs["Arch"] == "X86_64" and plain.machine_attrs["HasFileTransfer"] is True
    docker = startd_settings(config, (), MachineClass(1, (("NUM_CPUS", "4"),), (("HasDocker", True),)), EPOCH)
    assert docker.machine_attrs["HasDocker"] is True
