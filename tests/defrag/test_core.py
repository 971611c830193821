"""The defrag core's polls with numbers: which machines are drained, when, how many at once, what is
cancelled (HTCondor's manual, "Defragmenting Dynamic Slots" and "Defrag Daemon Configuration Options")."""

from __future__ import annotations

from htcpool.defrag import (
    AdsUnavailable,
    DrainAnswer,
    LogLine,
    Phase,
    SaveState,
    SendDrain,
    parse_state,
    state_text,
)
from htcpool.protocol import AdList, QueryAds, UpdateAd
from htcpool.protocol.startd import CancelDrain, Drain, DrainCompletion, DrainSpeed
from tests.defrag.helpers import T0, cancels, core, drains, pslot

MANUAL_POLICY = ("DEFRAG_INTERVAL = 3600\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 1.0\n"
               "DEFRAG_MAX_WHOLE_MACHINES = 20\nDEFRAG_MAX_CONCURRENT_DRAINING = 10\n")
MINE = "Defrag DEFRAG@cm.test"
FAST_RATE = "DEFRAG_DRAINING_MACHINES_PER_HOUR = 100\n"  # 16 per 600 s poll


def _fragmented() -> list:
    """Four fragmented machines; the default DEFRAG_RANK prefers the least expected badput (m2)."""
    return [pslot(f"m{i}", ExpectedMachineGracefulDrainingBadput=badput, ExpectedMachineGracefulDrainingCompletion=T0 + i,
                  ExpectedMachineQuickDrainingBadput=badput // 2, ExpectedMachineQuickDrainingCompletion=T0)
            for i, badput in ((1, 500), (2, 100), (3, 300), (4, 900))]


def _logs(actions: list) -> str:
    return "\n".join(a.text for a in actions if isinstance(a, LogLine))


def test_the_manuals_policy_drains_one_machine_per_hour_best_rank_first() -> None:
    """The example policy of the manual's "Defragmenting Dynamic Slots": one machine an hour; the poll asks the collector, then drains the
    machine with the highest DEFRAG_RANK gracefully, resuming on completion, START = DEFRAG_DRAINING_START_EXPR."""
    d = core(MANUAL_POLICY + "DEFRAG_STATE_FILE = /state/defrag\n")
    assert d.next_deadline(T0) == T0
    first = d.handle_timer(T0)
    assert isinstance(first[0], UpdateAd) and first[0].ad["MyType"] == "Defrag"
    assert first[1] == SaveState("/state/defrag", f"LastPoll = {int(T0)}\n")
    assert first[2] == QueryAds("Machine", "PartitionableSlot && Offline =!= true")
    assert d.phase is Phase.AWAITING_ADS and d.next_deadline(T0) == T0 + 300  # only the ad update is armed
    actions = d.handle(T0 + 1, AdList(tuple(_fragmented())))
    sent = [a for a in actions if isinstance(a, SendDrain)]
    assert [(s.machine, s.slot, s.address) for s in sent] == [("m2", "slot1@m2", "http://m2.test")]
    assert sent[0].message == Drain(DrainSpeed.GRACEFUL, DrainCompletion.RESUME,
                                    f"ExpectedMachineGracefulDrainingCompletion <= {int(T0) + 2 + 1200} && "
                                    "ExpectedMachineGracefulDrainingBadput <= 1325", "FALSE", MINE)
    d.handle(T0 + 2, DrainAnswer("m2", True))
    ad = d.ad(T0 + 3)
    assert (ad["DrainSuccesses"], ad["RecentDrainSuccesses"], ad["DrainFailures"]) == (1, 1, 0)
    assert ad["RecentDrainsList"][0]["who"] == "slot1@m2" and ad["RecentDrainsList"][0]["what"] == "graceful"
    assert d.next_deadline(T0 + 3) == T0 + 300 and d.handle_timer(T0 + 300)[0].ad["DrainSuccesses"] == 1
    assert d.next_poll == T0 + 3600


def test_refused_drain_moves_on_to_the_next_candidate() -> None:
    """A startd that refuses (its check expression failed, a drain in progress) counts as a
    DrainFailure and the poll tries the next machine in rank order until one accepts."""
    d = core(MANUAL_POLICY)
    assert drains(d.evaluate(T0, _fragmented())) == ["m2"]
    assert drains(d.handle(T0, DrainAnswer("m2", False, "DRAINING_CHECK_EXPR_FAILED"))) == ["m3"]
    assert drains(d.handle(T0, DrainAnswer("m3", True))) == []
    ad = d.ad(T0)
    assert (ad["DrainSuccesses"], ad["DrainFailures"]) == (1, 1)
    assert [c["who"] for c in ad["RecentDrainsList"]] == ["slot1@m3", "slot1@m2"]  # newest first


def test_max_concurrent_draining_is_checked_once_per_poll() -> None:
    """DEFRAG_MAX_CONCURRENT_DRAINING: with as many of this daemon's drains running nothing starts;
    below it, the poll drains up to its count (HTCondor checks the limit once, before the drains)."""
    ads = [pslot("d1", Draining=True, DrainReason=MINE), pslot("d2", Draining=True), *_fragmented()]
    d = core(FAST_RATE + "DEFRAG_MAX_CONCURRENT_DRAINING = 2\n")
    actions = d.evaluate(T0, ads)
    assert drains(actions) == [] and "DEFRAG_MAX_CONCURRENT_DRAINING=2 and there are 2 draining" in _logs(actions)
    assert d.ad(T0)["MachinesDraining"] == 2
    d = core(FAST_RATE + "DEFRAG_MAX_CONCURRENT_DRAINING = 2\n")
    assert drains(d.evaluate(T0, ads[1:])) == ["m2", "m3", "m1", "m4"]
    assert drains(core(FAST_RATE + "DEFRAG_MAX_CONCURRENT_DRAINING = 0\n").evaluate(T0, _fragmented())) == []


def test_whole_machines_are_skipped_and_capped() -> None:
    """DEFRAG_WHOLE_MACHINE_EXPR: a whole machine is never drained; DEFRAG_MAX_WHOLE_MACHINES stops
    new drains once that many are whole; a machine drained by someone else does not count as whole."""
    whole = pslot("w1", cpus=8)
    by_admin = pslot("w2", cpus=8, Draining=True, DrainReason="by admin")
    d = core(FAST_RATE)
    assert drains(d.evaluate(T0, [whole, by_admin, *_fragmented()])) == ["m2", "m3", "m1", "m4"]
    assert (d.ad(T0)["WholeMachines"], d.ad(T0)["MachinesDraining"]) == (1, 0)
    capped = core(FAST_RATE + "DEFRAG_MAX_WHOLE_MACHINES = 1\n").evaluate(T0, [whole, *_fragmented()])
    assert drains(capped) == [] and "DEFRAG_MAX_WHOLE_MACHINES=1 and there are 1 whole machines" in _logs(capped)
    custom = core(FAST_RATE + "DEFRAG_WHOLE_MACHINE_EXPR = Cpus >= 4\n").evaluate(T0, [pslot("h", cpus=4), whole])
    assert drains(custom) == []


def test_cancel_requirements_cancel_this_daemons_drains() -> None:
    """DEFRAG_CANCEL_REQUIREMENTS (default: the whole-machine expression): a machine this daemon is
    draining that has become whole gets CancelDrain, is not drained again in that poll, and is listed
    in RecentCancelsList; another's drain is left alone; an empty value cancels nothing."""
    done = pslot("m9", cpus=8, Draining=True, DrainReason=MINE)
    others = pslot("m8", cpus=8, Draining=True, DrainReason="by admin")
    d = core(FAST_RATE)
    actions = d.evaluate(T0, [done, others, *_fragmented()])
    assert cancels(actions) == ["m9"] and "m9" not in drains(actions)
    assert next(a for a in actions if hasattr(a, "message") and a.machine == "m9").message == CancelDrain()
    assert d.ad(T0)["RecentCancelsList"][0]["who"] == "m9"
    assert cancels(core(FAST_RATE + "DEFRAG_CANCEL_REQUIREMENTS =\n").evaluate(T0, [done])) == []
    partial = core("DEFRAG_CANCEL_REQUIREMENTS = Cpus >= 4\n").evaluate(T0, [pslot("p", cpus=4, Draining=True)])
    assert cancels(partial) == ["p"]  # draining partial machines: cancel once 4 cores are free


def test_requirements_rank_and_schedule() -> None:
    """DEFRAG_REQUIREMENTS narrows the candidates; DEFRAG_RANK orders them (higher first);
    DEFRAG_DRAINING_SCHEDULE quick sends a quick drain checked against the quick estimates."""
    ads = [pslot("small", total=4, Size=1), pslot("big", total=16, Size=3), pslot("mid", total=8, Size=2)]
    picked = core(FAST_RATE + "DEFRAG_REQUIREMENTS = TotalCpus >= 8\nDEFRAG_RANK = Size\n").evaluate(T0, ads)
    assert drains(picked) == ["big", "mid"]
    quick = core(FAST_RATE + "DEFRAG_DRAINING_SCHEDULE = quick\nDEFRAG_DRAINING_START_EXPR = MaxJobRetirementTime == 0\n")
    sent = [a for a in quick.evaluate(T0, _fragmented()[1:2]) if isinstance(a, SendDrain)][0].message
    assert sent.how_fast is DrainSpeed.QUICK and sent.start_expr == "MaxJobRetirementTime == 0"
    assert sent.check_expr == f"ExpectedMachineQuickDrainingCompletion <= {int(T0) + 1200} && " \
                              "ExpectedMachineQuickDrainingBadput <= 1262"


def test_one_drain_per_machine_however_many_slots() -> None:
    """A machine is a startd: two partitionable slots of one startd are one candidate."""
    ads = [pslot("m1"), pslot("m1", Name="slot2@m1"), pslot("m2")]
    assert sorted(drains(core(FAST_RATE).evaluate(T0, ads))) == ["m1", "m2"]


def test_statistics_peaks_recent_window_and_arrivals() -> None:
    """Defrag ClassAd Attributes: peaks keep the largest count; Recent* counts cover ten intervals;
    a machine newly whole (or no longer draining) arrives, and from the second arrival on
    DrainedMachines and MeanDrainedArrival (machines per second) are published."""
    d = core("DEFRAG_DRAINING_MACHINES_PER_HOUR = 6\n")  # one a poll
    d.evaluate(T0, [pslot("a", Draining=True), pslot("b", Draining=True), *_fragmented()])
    d.handle(T0, DrainAnswer("m2", True))
    d.evaluate(T0 + 600, [pslot("a", cpus=8, Draining=True), pslot("b", Draining=True)])
    d.evaluate(T0 + 1200, [pslot("a", cpus=8), pslot("b", cpus=8)])
    ad = d.ad(T0 + 1200)
    assert (ad["MachinesDraining"], ad["MachinesDrainingPeak"], ad["WholeMachines"], ad["WholeMachinesPeak"]) == \
           (0, 2, 2, 2)
    # the third poll: b newly whole, a and b no longer draining - three arrivals 600 s after the first
    assert ad["DrainedMachines"] == 3 and ad["MeanDrainedArrival"] == 1 / 600
    assert ad["RecentDrainSuccesses"] == 1 and ad["RecentWindowMax"] == 6000
    late = d.ad(T0 + 6000)
    assert (late["DrainSuccesses"], late["RecentDrainSuccesses"], late["RecentStatsLifetime"]) == (1, 0, 6000)


def test_draining_cost_averages_the_startds_totals() -> None:
    """AvgDrainingBadput / AvgDrainingUnclaimed: each startd's TotalMachineDraining* over its age,
    summed, over the pool's cores (SlotID 1 ads only)."""
    ads = [pslot("a", TotalMachineDrainingBadput=7200, TotalMachineDrainingUnclaimedTime=3600,
                 DaemonStartTime=int(T0) - 3600, LastHeardFrom=int(T0)),
           pslot("b", TotalMachineDrainingBadput=0, DaemonStartTime=int(T0) - 3600, LastHeardFrom=int(T0))]
    d = core()
    d.evaluate(T0, ads)
    ad = d.ad(T0)
    assert (ad["AvgDrainingBadput"], ad["AvgDrainingUnclaimed"]) == (2 / 16, 1 / 16)


def test_polls_keep_their_interval_across_restarts() -> None:
    """DEFRAG_STATE_FILE: the first poll after a restart comes DEFRAG_INTERVAL after the saved one
    (at once when none is saved or it is too old); DEFRAG_INTERVAL <= 0 never polls."""
    assert parse_state(state_text(T0)) == T0 and parse_state("garbage") is None
    assert core(now=T0, last_poll=T0 - 100).next_poll == T0 + 500
    assert core(now=T0, last_poll=T0 - 900).next_poll == T0
    off = core("DEFRAG_INTERVAL = 0\n")
    assert off.next_poll is None and all(isinstance(a, UpdateAd) for a in off.handle_timer(T0))
    d = core()
    d.handle_timer(T0)
    assert drains(d.handle(T0, AdList(()))) == [] and d.phase is Phase.IDLE
    assert d.handle(T0 + 1, AdList(tuple(_fragmented()))) == []  # no poll is waiting for ads


def test_a_failed_query_leaves_the_counts_alone() -> None:
    """A poll whose ads could not be fetched drains nothing and does not read as a pool whose
    machines vanished: the next good poll sees no new arrival."""
    d = core()
    d.handle_timer(T0)
    d.handle(T0, AdList((pslot("w", cpus=8),)))
    d.handle_timer(T0 + 600)
    lines = d.handle(T0 + 600, AdsUnavailable("timed out"))
    assert [a.text for a in lines] == ["Doing nothing, because the query for machine ads failed: timed out"]
    assert d.phase is Phase.IDLE and d.ad(T0 + 600)["WholeMachines"] == 1
    d.handle_timer(T0 + 1200)
    d.handle(T0 + 1200, AdList((pslot("w", cpus=8),)))
    assert d.ad(T0 + 1200)["DrainedMachines"] == 0 and d.stats.arrivals.last_arrival == T0
