"""Claims that no longer exist: the claim-id index, starters of removed dynamic slots
(KILLING_TIMEOUT, reused sub-ids), as HTCondor 25's startd does it: ids reused by the IdDispenser
(``ResMgr.cpp``), soft/hard kill and KILLING_TIMEOUT (``claim.cpp``) and claims found by id
(``command.cpp``)."""

from __future__ import annotations

from collections.abc import Iterator

from htcpool.classad import ClassAd, ExprTree
from htcpool.classad.match import requirements_hold
from htcpool.startd import (
    ActivateClaim,
    Alive,
    FinalJobUpdate,
    KillStarterFamily,
    ReleaseClaim,
    RequestClaim,
    SlotTypeSettings,
    Startd,
    StartdSettings,
    StarterExited,
)
from htcpool.startd.settings import POLICY_FALLBACKS
from htcpool.startd.slot import Slot
from tests.startd.helpers import job, make_startd, pair

PSLOT = ("RunBenchmarks = false\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\n"
         "MaxJobRetirementTime = 0\n")


def _preempted_and_reused() -> tuple[Startd, str, Slot]:
    s = make_startd(PSLOT, cpus=2, memory=2048)
    p = s.slot("slot1")
    s.handle(RequestClaim(p.claim.id, job(RequestCpus=2, RequestMemory=1024), schedd="ap-a"), 0)
    old = s.slot("slot1_1")
    s.handle(ActivateClaim(old.claim.id, old.claim.request), 1)  # type: ignore[arg-type]
    old_id = old.claim.id
    s.handle(RequestClaim(p.claim.id, job(Owner="bob", RequestCpus=2, RequestMemory=1024), schedd="ap-b",
                          preempt_claim_ids=(old_id,)), 10)
    new = s.slot("slot1_1")
    assert new is not old and new.claim.id != old_id
    s.handle(ActivateClaim(new.claim.id, new.claim.request), 11)  # type: ignore[arg-type]
    assert pair(s, "slot1_1") == ("Claimed", "Busy")
    return s, old_id, new


def test_killing_timeout_of_a_preempted_dynamic_slot_is_kept() -> None:
    """KILLING_TIMEOUT after a hard kill (``claim.cpp``) with the negotiator preempting dslots:
    the removed slot's starter is still SIGKILLed when KILLING_TIMEOUT (30 s) runs out."""
    s, old_id, _ = _preempted_and_reused()
    assert s.next_deadline() == 40
    actions = s.handle_timer(40)
    assert KillStarterFamily("slot1_1@test.example.org", old_id) in actions


def test_late_starter_exit_of_the_old_incarnation_is_harmless() -> None:
    """Dynamic sub-ids are reused (``ResMgr.cpp``) and claims are found by id (``command.cpp``): a
    late StarterExited/FinalJobUpdate for the preempted slot1_1 leaves the new slot1_1 running and
    ends the old starter's KILLING_TIMEOUT."""
    s, old_id, new = _preempted_and_reused()
    s.handle(FinalJobUpdate("slot1_1@test.example.org", old_id), 12)
    s.handle(StarterExited("slot1_1@test.example.org", old_id), 13)
    assert pair(s, "slot1_1") == ("Claimed", "Busy") and new.starter_active
    assert not any(isinstance(a, KillStarterFamily) for a in s.handle_timer(40))
    s.handle(StarterExited("slot1_1@test.example.org", new.claim.id), 50)
    assert pair(s, "slot1_1") == ("Claimed", "Idle")


def test_name_only_starter_exit_goes_to_the_dying_incarnation_first() -> None:
    """Sub-ids are reused: without a claim id, a StarterExited naming a reused sub-id is taken to be
    the killed starter of the removed incarnation while one is pending."""
    s, _, new = _preempted_and_reused()
    s.handle(StarterExited("slot1_1@test.example.org"), 13)
    assert pair(s, "slot1_1") == ("Claimed", "Busy") and not s.dying
    s.handle(StarterExited("slot1_1@test.example.org"), 14)
    assert pair(s, "slot1_1") == ("Claimed", "Idle") and not new.starter_active


def test_messages_about_a_removed_claim_do_nothing() -> None:
    """``command.cpp``: ALIVE, RELEASE_CLAIM and ACTIVATE_CLAIM are found by claim id, so the
    preempted claim's id no longer reaches the slot that reuses its name."""
    s, old_id, new = _preempted_and_reused()
    lease = new.claim.lease_expires
    s.handle(Alive(old_id), 20)
    s.handle(ReleaseClaim(old_id), 20)
    s.handle(ActivateClaim(old_id, job()), 20)
    assert pair(s, "slot1_1") == ("Claimed", "Busy") and new.claim.lease_expires == lease


class _NoScan(list[Slot]):
    def __iter__(self) -> Iterator[Slot]:
        raise AssertionError("claim lookup scanned every slot")


def test_claim_lookup_is_indexed() -> None:
    """``command.cpp`` (REQUEST_CLAIM/RELEASE_CLAIM/ALIVE name a claim id): the current claim, the
    pre-made preempting id and a pending preempting claim are found without scanning the slots."""
    s = make_startd("RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\nNUM_SLOTS = 3\n"
                   "MaxJobRetirementTime = 1000\n", cpus=3)
    slot = s.slot("slot2")
    s.handle(RequestClaim(slot.claim.id, job()), 0)
    s.handle(ActivateClaim(slot.claim.id, job()), 0)
    s.handle(RequestClaim(slot.preempting_id, job(Owner="bob")), 1)
    pending = slot.preempting
    assert pending is not None and slot.starter_active
    slots = s.slots
    s.slots = _NoScan(slots)
    try:
        assert s.find_claim(slot.claim.id) is slot
        assert s.find_preempting_id(slot.preempting_id) is slot
        assert s.find_pending_preempting(pending.id) is slot
        assert s.find_claim(pending.id) is None and s.find_claim("nonsense") is None
    finally:
        s.slots = slots


# ---------------------------------------------------------------------- CATALOG_SPACE
def test_catalog_space_is_subtracted_from_the_disk_request() -> None:
    """``Reqexp.cpp`` (generated WithinResourceLimits: ``(TARGET.RequestDisk - <CATALOG_SPACE>) <=
    MY.Disk``) and ``param_info.in`` (CATALOG_SPACE default): catalog space does not count against
    the slot's disk, and the default is 0 for a job without catalogs."""
    static = "RunBenchmarks = false\nSLOT_TYPE_0_PARTITIONABLE = false\n"
    s = make_startd(static + "CATALOG_SPACE = 4000\n")
    ad = s.slot("slot1").ad
    disk = ad["Disk"]
    assert requirements_hold(ad, job(RequestDisk=disk + 3000), s.ctx)
    assert not requirements_hold(ad, job(RequestDisk=disk + 5000), s.ctx)
    plain = make_startd(static)
    ad = plain.slot("slot1").ad
    assert requirements_hold(ad, job(RequestDisk=disk), plain.ctx)
    assert not requirements_hold(ad, job(RequestDisk=disk + 1), plain.ctx)


def test_fallback_settings_equal_htcondors_defaults() -> None:
    """``param_info.in``: a ``StartdSettings`` built without configuration uses HTCondor's
    defaults - ``MODIFY_REQUEST_EXPR_REQUESTDISK = quantize(RequestDisk - $(CATALOG_SPACE),
    {Target.DiskQuantum?:1024})`` and the ``CATALOG_SPACE`` default - exactly as the configuration
    reader expands them, so carving subtracts catalog space from the disk request either way."""
    configured = make_startd("").settings
    bare = StartdSettings()
    assert dict(bare.modify_request_exprs) == dict(configured.modify_request_exprs)
    assert bare.modify_request_exprs["RequestDisk"].startswith("quantize(RequestDisk - ")
    assert "$(" not in bare.modify_request_exprs["RequestDisk"]
    assert bare.catalog_space == configured.catalog_space
    # a job asking for two catalogs that it maps (not copies) gets a dynamic slot without their size
    s = Startd(StartdSettings(num_cpus=2, memory=2048, disk=10**6,
                              slot_types={1: SlotTypeSettings(1, "100%", 1, partitionable=True)},
                              policy={**POLICY_FALLBACKS, "RunBenchmarks": "false"}), 0.0)
    p = s.slot("slot1")
    catalogs = ClassAd({"catalogs": ExprTree('{[CatalogID = "a"; CatalogSize = 3000], '
                                            '[CatalogID = "b"; CatalogSize = 5000]}'),
                        "RequestedCatalogs": True, "RequestedCatalogIDs": ExprTree('{"a"}')})
    request = job(RequestDisk=3000 + 5000)
    request.update(catalogs)
    s.handle(RequestClaim(p.claim.id, request), 1)
    assert s.slot("slot1_1").ad["Disk"] == 5120  # (8000 - 3000) quantized to 1024 KiB
