"""Every protocol message, valid and hostile, at the master's HTTP endpoint (in-process).

The master service runs behind its real Starlette application with its children faked
(``tests/runtime/test_master.py``'s harness: fake processes that exit when signalled). Bodies
come from the same strategy as the other daemons' fuzzing (``fuzzing.bodies``), so they include
well-formed ``DaemonCommand``s: turning daemons off, on and restarting them is what an
administrator may do, and the master must do it without a 500, within a few seconds, and stay
consistent. Afterwards it still answers ``status``, every child it wants is running or due to
start again, and the children it was told to turn off are the only ones not running.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from htcpool.protocol import Command, DaemonCommand, How, encode
from htcpool.runtime.http import PATH, make_app
from tests.faults.fuzzing import bodies
from tests.faults.test_fuzz_messages import ANSWER_WITHIN, check_answer
from tests.runtime.test_master import Master

#: names an administrator might give: the master's children, others, odd spellings
NAMES = ("collector", "negotiator", "schedd", "SCHEDD", "startd", "master", "", "schedd ")
#: commands aimed at the master's own children, so that off, on, restart and reconfig happen
commands = st.builds(DaemonCommand, st.sampled_from(list(Command)), st.sampled_from(list(How)),
                     st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map(tuple))
master_bodies = bodies() | bodies(("DaemonCommand",)) | commands.map(lambda c: json.dumps(encode(c)).encode())


def fuzz(tmp_path: Path, examples: int, derandomize: bool) -> None:
    loop = asyncio.new_event_loop()
    master = Master(tmp_path)
    master.service.background.answer_within = 0.05  # the fake children stopped peacefully never exit: do not wait on them
    token = master.layout.read_token()
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=make_app(master.service.handle, token, "master")),
                               base_url="http://master.test", headers={"Authorization": f"Bearer {token}"})
    try:
        loop.run_until_complete(asyncio.wait_for(master.service.start(), 30))

        @settings(max_examples=examples, deadline=None, database=None, derandomize=derandomize,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
        @given(body=master_bodies)
        def one(body: bytes) -> None:
            started = time.monotonic()
            response = loop.run_until_complete(
                asyncio.wait_for(client.post(PATH, content=body), ANSWER_WITHIN))
            check_answer("master", body, response, time.monotonic() - started)

        one()
        status = loop.run_until_complete(asyncio.wait_for(master.status(), 10))
        assert set(status) == {"collector", "negotiator", "schedd"}, status
        for name, child in master.service.children.items():
            running = child.process is not None
            due = child.next_start is not None
            assert running or due or not child.wanted, f"{name} is wanted but neither running nor due: {status}"
        # the master still obeys an ordinary command after all that
        loop.run_until_complete(master.service.handle(DaemonCommand(Command.ON, How.GRACEFUL, ())))
        assert all(c.process is not None for c in master.service.children.values())
        loop.run_until_complete(asyncio.wait_for(master.service.stop(How.FAST), 30))
        assert all(c.process is None or c.stopping for c in master.service.children.values())
    finally:
        loop.run_until_complete(client.aclose())
        loop.close()


def test_the_master_answers_every_message_without_a_500(tmp_path: Path) -> None:
    fuzz(tmp_path, examples=300, derandomize=True)  # the same draws on every run


@pytest.mark.slow
def test_the_master_answers_many_more_messages_without_a_500(tmp_path: Path) -> None:
    fuzz(tmp_path, examples=3000, derandomize=False)
