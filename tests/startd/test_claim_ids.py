"""Claim ids carry a secret random part (docs/reliability.md): no two claims share an id, and an
id that was not handed out (another slot's, a guessed one, one with its secret changed) is refused."""

from __future__ import annotations

import re

from htcpool.protocol.startd import ActivateClaim, ClaimReply, ReleaseClaim, RequestClaim
from htcpool.startd.claim_ids import seeded_secrets

from .helpers import job, make_startd

ID = re.compile(r"^<[^>]+>#\d+#\d+#([0-9a-f]{32})#(.+)$")


def replies(actions: list[object]) -> list[ClaimReply]:
    return [a for a in actions if isinstance(a, ClaimReply)]


def test_ids_are_unique_over_many_claims() -> None:
    startd = make_startd("NUM_SLOTS = 4", cpus=4, memory=4096)
    seen: set[str] = set()
    now = 10.0
    for _ in range(50):
        for slot in startd.slots:
            cid = slot.claim.id
            assert cid not in seen, f"{cid} handed out twice"
            seen.add(cid)
            assert ID.match(cid), cid
            assert replies(startd.handle(RequestClaim(cid, job()), now))[0].accepted
            startd.handle(ReleaseClaim(cid), now)
            now += 1.0
            startd.evaluate(now)
    assert len(seen) == 200
    secrets = {ID.match(cid).group(1) for cid in seen}  # type: ignore[union-attr]
    assert len(secrets) == 200


def test_another_slots_id_is_refused() -> None:
    startd = make_startd("NUM_SLOTS = 2", cpus=2, memory=2048)
    one, two = startd.slot("slot1").claim.id, startd.slot("slot2").claim.id
    # slot1's id with slot2's name: the secret belongs to slot1's claim, so no slot takes it
    forged = one.rsplit("#", 1)[0] + "#" + two.rsplit("#", 1)[1]
    reply = replies(startd.handle(RequestClaim(forged, job()), 5.0))
    assert reply == [ClaimReply(forged, False, "unknown claim id")]
    assert startd.slot("slot2").state.value == "Unclaimed"


def test_a_guessed_secret_is_refused() -> None:
    startd = make_startd()
    real = startd.slot("slot1").claim.id
    secret = ID.match(real).group(1)  # type: ignore[union-attr]
    for guess in ("0" * 32, secret[:-1] + ("0" if secret[-1] != "0" else "1"), ""):
        forged = real.replace(secret, guess)
        reply = replies(startd.handle(RequestClaim(forged, job()), 5.0))
        assert reply and not reply[0].accepted, forged
    # what the pool advertises is not enough to rebuild the id
    public = startd.slot("slot1").claim.id.split("#")
    assert secret not in "#".join(public[:3] + public[4:])
    assert replies(startd.handle(RequestClaim(real, job()), 6.0))[0].accepted


def test_a_released_id_is_not_reused() -> None:
    startd = make_startd()
    first = startd.slot("slot1").claim.id
    startd.handle(RequestClaim(first, job()), 1.0)
    startd.handle(ActivateClaim(first, job()), 1.0)
    startd.handle(ReleaseClaim(first), 2.0)
    startd.evaluate(3.0)
    assert startd.slot("slot1").claim.id != first
    assert not replies(startd.handle(RequestClaim(first, job()), 4.0))[0].accepted


def test_injected_secrets_make_the_ids() -> None:
    secrets = iter(f"{n:032x}" for n in range(1000, 2000))
    startd = make_startd("NUM_SLOTS = 2", cpus=2, memory=2048, claim_secrets=lambda: next(secrets))
    assert [ID.match(s.claim.id).group(1) for s in startd.slots] == [  # type: ignore[union-attr]
        f"{1000:032x}", f"{1001:032x}"]


def test_the_default_is_seeded_so_runs_replay() -> None:
    a, b = make_startd(now=7.0), make_startd(now=7.0)
    assert a.slot("slot1").claim.id == b.slot("slot1").claim.id
    assert make_startd(now=8.0).slot("slot1").claim.id != a.slot("slot1").claim.id
    draw = seeded_secrets("x")
    assert draw() != draw() and seeded_secrets("x")() == seeded_secrets("x")()
