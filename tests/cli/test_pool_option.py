"""``-pool HOST[:PORT]`` of condor_status and condor_q: the collector of that central manager."""

from __future__ import annotations

import pytest

from htcpool.cli.common import ToolError, pool_collector


def test_pool_names_a_collector_in_collector_hosts_form() -> None:
    assert pool_collector(None) is None
    assert pool_collector("127.0.0.1:9700") == "http://127.0.0.1:9700"
    assert pool_collector("127.0.0.1") == "http://127.0.0.1:9618"  # COLLECTOR_HOST's default port
    assert pool_collector("[::1]:9700") == "http://[::1]:9700"


def test_a_pool_that_cannot_be_read_is_named() -> None:
    with pytest.raises(ToolError) as e:
        pool_collector("host:notaport")
    assert "-pool 'host:notaport'" in str(e.value)
