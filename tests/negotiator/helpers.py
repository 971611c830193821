"""Builders of slot ads, jobs and submitters for the negotiator's scenario tests."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from htcpool.classad import ClassAd, ExprTree
from htcpool.negotiator import (
    AutoclusterPolicy,
    AutoclusterTable,
    NegotiatorPolicy,
    SubmitterAd,
    resource_requests,
    significant_attributes,
)

START = 1_800_000_000.0  # a fixed "now" in 2027
DAY = 86400.0


def slot(name: str, **attrs: Any) -> ClassAd:
    """An unclaimed static slot: 1 cpu, 1024 MB, Requirements = START = true, Rank = 0."""
    ad = ClassAd()
    ad["Name"] = name
    ad["Cpus"] = 1
    ad["Memory"] = 1024
    ad["Disk"] = 100000
    ad["State"] = "Unclaimed"
    ad["Activity"] = "Idle"
    ad["OpSys"] = "LINUX"
    ad["Start"] = True
    ad["Requirements"] = ExprTree("START")
    ad["Rank"] = 0
    ad["SlotID"] = 1
    for k, v in attrs.items():
        ad[k] = ExprTree(v[1:]) if isinstance(v, str) and v.startswith("=") else v
    return ad


def claimed(name: str, user: str, **attrs: Any) -> ClassAd:
    defaults: dict[str, Any] = {
        "State": "Claimed", "Activity": "Busy", "RemoteUser": user, "RemoteOwner": user,
        "CurrentRank": 0,
    }
    return slot(name, **{**defaults, **attrs})


def job(cluster: int, proc: int = 0, **attrs: Any) -> ClassAd:
    ad = ClassAd()
    ad["ClusterId"] = cluster
    ad["ProcId"] = proc
    ad["RequestCpus"] = 1
    ad["RequestMemory"] = 512
    ad["RequestDisk"] = 1000
    ad["JobPrio"] = 0
    ad["Requirements"] = ExprTree("TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus")
    for k, v in attrs.items():
        ad[k] = ExprTree(v[1:]) if isinstance(v, str) and v.startswith("=") else v
    return ad


def submitters(
    slots: Iterable[ClassAd],
    jobs_by_submitter: dict[str, list[ClassAd]],
    policy: NegotiatorPolicy | None = None,
    running: dict[str, int] | None = None,
    all_jobs: bool = False,
) -> list[SubmitterAd]:
    """Submitter ads with their request lists, autoclusters shared by every submitter."""
    table = AutoclusterTable(
        significant_attributes(slots, policy or NegotiatorPolicy()),
        AutoclusterPolicy(negotiate_all_jobs_in_cluster=all_jobs),
    )
    return [
        SubmitterAd(name, schedd="schedd@host", requests=resource_requests(jobs, table, START),
                    running_jobs=(running or {}).get(name, 0))
        for name, jobs in jobs_by_submitter.items()
    ]


def many_jobs(n: int, first_cluster: int = 1, **attrs: Any) -> list[ClassAd]:
    return [job(first_cluster, p, **attrs) for p in range(n)]


def count_by(matches: Iterable[Any], attr: str = "submitter") -> dict[str, int]:
    out: dict[str, int] = {}
    for m in matches:
        key = getattr(m, attr)
        out[key] = out.get(key, 0) + 1
    return out


def churned(rng: random.Random, pool: list[ClassAd], cycles: int,
            change: Callable[[random.Random, ClassAd, int], ClassAd],
            jobs: Callable[[random.Random, int], dict[str, list[ClassAd]]],
            ) -> Iterator[tuple[int, dict[str, list[ClassAd]], float]]:
    """The inputs of ``cycles`` negotiation cycles over a pool that changes between them: before
    each, up to seven random slots of ``pool`` (replaced in place) become ``change(rng, ad, i)``;
    then the cycle's number, its jobs (``jobs(rng, cycle)``) and its time, a minute apart."""
    for cycle in range(cycles):
        for i in rng.sample(range(len(pool)), rng.randrange(0, 8)):
            pool[i] = change(rng, pool[i], i)
        yield cycle, jobs(rng, cycle), START + 60 * cycle

