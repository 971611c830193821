"""condor_submit's NewCluster: the schedd core reserves a cluster id before the file is expanded.

The reserved id is used by the owner's next Submit naming it; an unused one is skipped; ids
never repeat, across restarts too (the counter is written at reservation); a Submit naming an
id that is not reserved for its owner is refused with a reason.
"""

from __future__ import annotations

import pytest

from htcpool.protocol import JobAction, JobActionKind, Submit, decode, encode
from htcpool.protocol.schedd import ClusterReserved, NewCluster
from htcpool.schedd import Schedd, ScheddSettings
from htcpool.schedd.errors import ScheddError
from htcpool.schedd.queue import RESERVATION_LIFETIME
from htcpool.schedd.store import MemoryStore
from htcpool.submit import MemoryFileSystem, SubmitHost, submit_description

T0 = 1_700_000_000.0
SUB = "executable = /bin/true\noutput = out.$(Cluster).$(Process)\nqueue 2\n"


def core(store: MemoryStore, next_cluster: int = 1) -> Schedd:
    schedd = Schedd(ScheddSettings(schedd_name="schedd@submit"), T0, store=store,
                    next_cluster=next_cluster, host="submit")
    schedd.start(T0, "http://submit:1", "<127.0.0.1:1>")
    return schedd


def reserve(schedd: Schedd, owner: str = "alice", now: float = T0) -> int:
    reply = schedd.handle(NewCluster(owner), now).reply
    assert isinstance(reply, ClusterReserved)
    return reply.cluster


def submit(schedd: Schedd, cluster: int, owner: str = "alice", now: float = T0) -> int:
    host = SubmitHost(user=owner, cwd="/home/" + owner, now=int(now))
    jobs = submit_description(SUB, host=host, fs=MemoryFileSystem(sizes={"/bin/true": 100}),
                              cluster_id=cluster).jobs
    return int(schedd.handle(Submit(owner, tuple(jobs), cluster), now).reply.cluster)


def test_the_reserved_id_is_the_clusters_and_in_its_macros() -> None:
    store = MemoryStore()
    schedd = core(store)
    cluster = reserve(schedd)
    assert store.next_cluster == cluster + 1  # written at reservation
    assert submit(schedd, cluster) == cluster
    outs = sorted(str(ad["Out"]) for ad in schedd.queue.jobs.values())
    assert outs == [f"out.{cluster}.0", f"out.{cluster}.1"]


def test_unused_reservations_are_skipped_and_ids_never_repeat() -> None:
    store = MemoryStore()
    schedd = core(store)
    first, second = reserve(schedd), reserve(schedd)
    assert submit(schedd, second) == second
    # a plain Submit (the htcondor2 bindings, old clients) takes the next id, after both
    plain = int(schedd.handle(Submit("bob", (schedd.queue.jobs[(second, 0)].copy(),)), T0).reply.cluster)
    assert plain > second > first
    restarted = core(store, next_cluster=store.next_cluster)
    assert reserve(restarted) > plain


@pytest.mark.parametrize("case", ["other owner", "used twice", "never reserved", "expired", "restart"])
def test_a_submit_naming_an_id_not_reserved_for_it_is_refused(case: str) -> None:
    store = MemoryStore()
    schedd = core(store)
    cluster = reserve(schedd)
    owner, now = "alice", T0
    if case == "other owner":
        owner = "mallory"
    elif case == "used twice":  # (sent again while its jobs are queued, it is answered as a retry:
        submit(schedd, cluster)   # tests/faults/test_protected_attrs.py)
        schedd.handle(JobAction(JobActionKind.REMOVE, "alice", (str(cluster),)), T0)
    elif case == "never reserved":
        cluster += 5
    elif case == "expired":
        reserve(schedd, now=T0 + RESERVATION_LIFETIME + 1)  # a later reservation drops stale ones
        now = T0 + RESERVATION_LIFETIME + 2
    else:
        schedd = core(store, next_cluster=store.next_cluster)
    queued = len(schedd.queue.jobs)
    with pytest.raises(ScheddError, match=f"cluster {cluster} is not reserved for {owner}"):
        submit(schedd, cluster, owner, now)
    assert len(schedd.queue.jobs) == queued


def test_the_messages_travel() -> None:
    assert decode(encode(NewCluster("alice"))) == NewCluster("alice")
    assert decode(encode(ClusterReserved(7))) == ClusterReserved(7)
    old_form = {k: v for k, v in encode(Submit("alice", ())).items() if k != "cluster"}
    assert decode(old_form) == Submit("alice", ())
