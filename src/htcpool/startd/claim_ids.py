"""Claim ids: what makes one, and the secret part that makes it unguessable.

A claim id is the capability to use a slot: whoever presents it may activate,
deactivate, release or renew the claim, so the startd looks a slot up by nothing
else (``Startd.find_claim``). HTCondor's ids carry a random secret for that reason
("Claim" and "ClaimId" in HTCondor's manual; docs/reliability.md). Here an id reads

    <hostname>#<startd start time>#<sequence>#<secret>#<slot id>

The first three fields keep ids of one startd unique and the slot id says whose it
is; the secret (128 random bits in hex) is what cannot be derived from anything the
pool advertises. ``PublicClaimId`` (``startd.dynamic``) shows the first and last
fields only; ``without_secret`` keeps all but the secret, for what a log line may name (the
daemons' outbox queues of a claim's messages are named with it).

The core never draws randomness itself: a ``ClaimSecrets`` function is injected. The
live startd passes one backed by the ``secrets`` module (``runtime.startd_service``);
the simulator and tests get ``seeded_secrets``, so their ids, and whole runs,
replay exactly.
"""

from __future__ import annotations

import random
from collections.abc import Callable

#: returns a fresh secret (hex text) at each call
ClaimSecrets = Callable[[], str]

#: random bits in each secret
SECRET_BITS = 128


def seeded_secrets(seed: str) -> ClaimSecrets:
    """Secrets from a generator seeded with ``seed``: the same seed, the same sequence."""
    rng = random.Random(seed)

    def draw() -> str:
        return f"{rng.getrandbits(SECRET_BITS):0{SECRET_BITS // 4}x}"

    return draw


def make_claim_id(hostname: str, start_time: float, sequence: int, secret: str, id_str: str) -> str:
    """The claim id of the ``sequence``-th claim of the startd on ``hostname``, for slot ``id_str``."""
    return f"<{hostname}>#{int(start_time)}#{sequence}#{secret}#{id_str}"


def without_secret(claim_id: str) -> str:
    """The claim id with its secret left out (an id of another shape: its first field only)."""
    parts = claim_id.split("#")
    if len(parts) == 5:
        return "#".join(parts[:3] + parts[4:])
    return parts[0]

