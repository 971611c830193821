"""The message registry reads the startd's, the collector's and the negotiator's messages only
when a lookup needs them; the package's names for the last two are imported on first use."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from htcpool.protocol import MESSAGE_TYPES, decode, encode, startd

PROBE = """
import sys
from htcpool.protocol import MESSAGE_TYPES, Ping, decode, encode
from htcpool.protocol.schedd import NewCluster
assert decode(encode(NewCluster("alice"))) == NewCluster("alice")
assert decode(encode(Ping(("x",)))) == Ping(("x",))
print("startd loaded:", "htcpool.protocol.startd" in sys.modules)
print("others loaded:", [f"htcpool.protocol.{m}" in sys.modules for m in ("collector", "negotiator")])
reply = decode({"type": "DeactivateClaim", "claim_id": "c1"})
print("decoded:", type(reply).__module__, reply.claim_id)
from htcpool.protocol import QueryAds, Reschedule
print("named:", QueryAds.__module__, Reschedule.__module__)
"""


def test_schedd_messages_travel_without_importing_the_startds() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["startd loaded: False", "others loaded: [False, False]",
                                        "decoded: htcpool.protocol.startd c1",
                                        "named: htcpool.protocol.collector htcpool.protocol.negotiator"]


def test_the_registry_lists_every_message_of_every_daemon() -> None:
    own = {name for name, value in vars(startd).items()
           if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == startd.__name__}
    assert own and own <= set(MESSAGE_TYPES)
    assert {"Submit", "Ping", "UpdateAd", "FetchRequests"} <= set(MESSAGE_TYPES)
    assert len(MESSAGE_TYPES) == len(set(MESSAGE_TYPES))
    assert all(MESSAGE_TYPES[name].__name__ == name for name in MESSAGE_TYPES)
    assert MESSAGE_TYPES.get("NoSuchMessage") is None
    message = startd.DeactivateClaim("c1", forcibly=True)
    assert decode(encode(message)) == message
