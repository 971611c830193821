"""The negotiator service with group quotas whose configuration is partly unusable: each problem is
logged in NegotiatorLog naming its knob, and the groups that can be used still negotiate."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from htcpool.classad import ClassAd
from htcpool.protocol import FetchRequests, How, IdleJobs, MatchInfo, UpdateAd
from htcpool.runtime.collector_service import CollectorService
from htcpool.runtime.negotiator_service import NegotiatorService
from tests.negotiator.helpers import job, slot
from tests.runtime.inprocess import Clock, Network, Recorder, daemon, pool_layout, run

CHEMIST = "group_chemistry.curie@pool.test"
BROKEN = "group_broken.bob@pool.test"
CONFIG = """NEGOTIATOR_INTERVAL = 30
NEGOTIATOR_MIN_INTERVAL = 2
GROUP_NAMES = group_chemistry, group_broken, group_noquota, group_orphan.child, group_loop
GROUP_QUOTA_group_chemistry = 2
GROUP_QUOTA_group_broken = lots
GROUP_QUOTA_group_loop = $(GROUP_QUOTA_DYNAMIC_group_loop)
GROUP_QUOTA_DYNAMIC_group_loop = $(GROUP_QUOTA_group_loop)
"""


def test_unusable_group_knobs_are_logged_and_the_other_groups_negotiate(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    clock, network = Clock(), Network()
    layout = pool_layout(tmp_path, CONFIG)
    collector = CollectorService(daemon("collector", layout, clock, network))
    layout.write_address("collector", network.serve("collector", collector.handle, layout))
    idle = {CHEMIST: [job(1, p, Owner="curie") for p in range(4)],
            BROKEN: [job(2, p, Owner="bob") for p in range(4)]}

    def answer(message: Any) -> Any:
        if isinstance(message, FetchRequests):
            names = [n for n in message.submitters for _ in idle[n]]
            return IdleJobs(tuple(names), tuple(j for n in message.submitters for j in idle[n]))
        return None

    schedd, startd = Recorder(answer), Recorder()
    schedd_url = network.serve("schedd", schedd.handle, layout)
    startd_url = network.serve("startd", startd.handle, layout)
    negotiator_daemon = daemon("negotiator", layout, clock, network)

    async def test() -> None:
        with caplog.at_level(logging.WARNING, logger="htcpool.negotiator"):
            negotiator = NegotiatorService(negotiator_daemon)  # reads the policy: logs the problems
        warned = [r.getMessage() for r in caplog.records if r.name == "htcpool.negotiator"]
        text = "\n".join(warned)
        assert "GROUP_QUOTA_group_broken does not evaluate to a number" in text, text
        assert "neither GROUP_QUOTA_group_noquota nor GROUP_QUOTA_DYNAMIC_group_noquota" in text, text
        assert "group 'group_orphan.child' has no parent: 'group_orphan'" in text, text
        assert "GROUP_QUOTA_group_loop does not evaluate" in text and "refers" in text.lower(), text
        await collector.start()
        await negotiator.start()
        for i in range(4):
            ad = slot(f"slot{i}@host.test")
            ad["MyType"] = "Machine"
            ad["MyAddress"] = startd_url
            await collector.handle(UpdateAd(ad, private=ClassAd({"ClaimId": f"<c{i}>"})))
        for name, jobs in idle.items():
            await collector.handle(UpdateAd(ClassAd({
                "MyType": "Submitter", "Name": name, "ScheddName": "schedd@pool.test",
                "MyAddress": schedd_url, "IdleJobs": len(jobs), "RunningJobs": 0})))
        deadline = negotiator.next_deadline()
        assert deadline is not None
        clock.now = deadline
        await negotiator.on_timer(clock.now)
        await negotiator_daemon.outbox.flush()
        got = [m.submitter for m in schedd.of(MatchInfo)]
        # chemistry gets its quota of 2; the group whose quota is unusable has quota 0 and no
        # surplus to take (nobody accepts surplus by default), so it gets nothing
        assert got == [CHEMIST, CHEMIST], got
        await negotiator_daemon.outbox.flush()
        await negotiator.stop(How.GRACEFUL)
        await negotiator_daemon.client.close()

    run(test)
