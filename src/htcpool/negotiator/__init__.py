"""The negotiator's decision core: the accountant, the group quota tree and the negotiation cycle.

Sans-I/O: every entry point takes ``now``; nothing reads a clock, a file or the network. A driver
hands in slot ads and submitters' resource requests, gets back matches, rejections and statistics,
and persists the accountant's records through an ``AccountantStore``. ``exchange`` says what to
ask the other daemons and what a match tells them, ``schedule`` when the next cycle is due, and
``userprio`` what condor_userprio reads and changes. Knobs arrive as the plain policy records of
``settings``; ``policy.policy_from_config`` reads them from a configuration.
"""

from htcpool.negotiator.accountant import Accountant, SlotWeigher
from htcpool.negotiator.cycle import CycleOutcome, SubmitterAd, negotiate
from htcpool.negotiator.errors import NegotiatorError, NegotiatorUsageError, PolicyError
from htcpool.negotiator.exchange import (
    MatchMessages,
    fetch_request,
    match_messages,
    submitter_entries,
    submitters_by_schedd,
)
from htcpool.negotiator.groups import GroupNode, GroupTree
from htcpool.negotiator.outcomes import CycleResult, Match, PreemptState, Rejection, SubmitterShare
from htcpool.negotiator.policy import ConfigSource, policy_from_config
from htcpool.negotiator.records import (
    AccountantSnapshot,
    AccountantStore,
    CustomerRecord,
    MemoryStore,
)
from htcpool.negotiator.remainders import RoundRobinTimes
from htcpool.negotiator.requests import (
    AutoclusterTable,
    ResourceRequest,
    job_priority_key,
    resource_requests,
    significant_attributes,
)
from htcpool.negotiator.schedule import CycleSchedule
from htcpool.negotiator.settings import (
    AccountantPolicy,
    AutoclusterPolicy,
    GroupPolicy,
    GroupSettings,
    NegotiatorPolicy,
)
from htcpool.negotiator.stats import CycleStats, CycleStatsHistory
from htcpool.negotiator.userprio import USERPRIO_OPERATIONS, accounting_ads, apply_userprio
from htcpool.negotiator.userprio_format import format_userprio

__all__ = [
    "Accountant",
    "AccountantPolicy",
    "AccountantSnapshot",
    "AccountantStore",
    "AutoclusterPolicy",
    "AutoclusterTable",
    "ConfigSource",
    "CustomerRecord",
    "CycleOutcome",
    "CycleResult",
    "CycleSchedule",
    "CycleStats",
    "CycleStatsHistory",
    "GroupNode",
    "GroupPolicy",
    "GroupSettings",
    "GroupTree",
    "Match",
    "MatchMessages",
    "MemoryStore",
    "NegotiatorError",
    "NegotiatorPolicy",
    "NegotiatorUsageError",
    "PolicyError",
    "PreemptState",
    "Rejection",
    "ResourceRequest",
    "RoundRobinTimes",
    "SlotWeigher",
    "SubmitterAd",
    "SubmitterShare",
    "USERPRIO_OPERATIONS",
    "accounting_ads",
    "apply_userprio",
    "fetch_request",
    "format_userprio",
    "job_priority_key",
    "match_messages",
    "negotiate",
    "policy_from_config",
    "resource_requests",
    "significant_attributes",
    "submitter_entries",
    "submitters_by_schedd",
]
