"""Which operating-system account a job runs as, when the startd runs as root.

HTCondor's manual ("Security", "User Accounts in HTCondor on Unix Platforms") gives the order,
and ``decide_account`` follows it:

1. **The owner**, when ``STARTER_ALLOW_RUNAS_OWNER`` (an expression evaluated with the job ad as
   its target; true by default on Unix) and the job's ``RunAsOwner`` (true when absent) are both
   true, the job's ``UidDomain`` (when the job carries one) is this machine's ``UID_DOMAIN`` or
   ``TRUST_UID_DOMAIN`` is true, and an account of the job's ``Owner`` exists here;
2. else **the slot's user**, ``SLOT<N>_USER`` for slot N (and its dynamic slots ``slotN_M``);
3. else ``NOBODY_SLOT_USER`` when set, else the account ``nobody``.

A job of another user never runs as root: a slot user that is root, or that has no account
here (a mistake of the configuration), is refused, naming the knob. A job whose owner is root
itself runs as root. HTCondor's condor_submit refuses root's jobs outright; htcpool accepts them
so that root can use the pool it starts (the README's personal pool, run by root on many
machines), and running them as root grants nothing: only root can be authenticated as root
(peer credentials of uid 0 on a daemon's socket, or a token signed with the pool's own key).

The decision is a pure function of the job ad, the settings (``RunAsSettings``, read from the
configuration by ``run_as_settings``) and the account look-up passed in (``os_account`` reads the
password and group databases). ``Account`` travels to the starter in the launch description.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the starter reads Account without the ClassAd machinery
    from htcpool.classad import ClassAd

NOBODY = "nobody"


class RunAsError(Exception):
    """The job cannot run as any account this machine allows; the message says why."""


@dataclass(frozen=True)
class Account:
    """An account a job runs as: its name, ids, supplementary groups and home directory."""

    name: str
    uid: int
    gid: int
    groups: tuple[int, ...] = ()
    home: str = "/"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "uid": self.uid, "gid": self.gid, "groups": list(self.groups),
                "home": self.home}

    @classmethod
    def from_json(cls, data: object) -> Account | None:
        """The account ``to_json`` wrote; None for None; ValueError for anything else."""
        if data is None:
            return None
        if not isinstance(data, Mapping):
            raise ValueError("an account is a JSON object")
        return cls(str(data["name"]), int(data["uid"]), int(data["gid"]),
                   tuple(int(g) for g in data.get("groups", ())), str(data.get("home", "/")))


@dataclass(frozen=True)
class RunAsSettings:
    """The knobs of the decision (module docstring)."""

    uid_domain: str = "localhost"
    trust_uid_domain: bool = False
    allow_owner: str = "true"  #: STARTER_ALLOW_RUNAS_OWNER, an expression
    slot_users: Mapping[int, str] = field(default_factory=dict)  #: SLOT<N>_USER by N
    nobody_slot_user: str = ""  #: NOBODY_SLOT_USER


def run_as_settings(lookup: Callable[[str], str | None], slot_numbers: Iterable[int]) -> RunAsSettings:
    """The settings from a configuration (``lookup`` gives a knob's value) for a startd whose
    slots have ``slot_numbers``."""
    slot_users = {n: value for n in sorted(set(slot_numbers)) if (value := (lookup(f"SLOT{n}_USER") or "").strip())}
    trust = (lookup("TRUST_UID_DOMAIN") or "").strip().lower() in ("true", "yes", "1", "t")
    return RunAsSettings(uid_domain=(lookup("UID_DOMAIN") or "localhost").strip(), trust_uid_domain=trust,
                         allow_owner=(lookup("STARTER_ALLOW_RUNAS_OWNER") or "true").strip(),
                         slot_users=slot_users, nobody_slot_user=(lookup("NOBODY_SLOT_USER") or "").strip())


def owner_allowed(job: ClassAd, settings: RunAsSettings) -> bool:
    """Whether the job may run as its owner: STARTER_ALLOW_RUNAS_OWNER and the job's RunAsOwner
    both true, and its UID domain this machine's (or trusted)."""
    from htcpool.classad import ClassAdError, ExprTree

    try:
        allowed = ExprTree(settings.allow_owner).evaluate(job, job) is True
    except ClassAdError:
        allowed = False
    if not allowed or job.eval("RunAsOwner") is False:
        return False
    domain = job.eval("UidDomain")
    if not isinstance(domain, str) or settings.trust_uid_domain:
        return True
    return domain.lower() == settings.uid_domain.lower()


def decide_account(job: ClassAd, slot_number: int | None, settings: RunAsSettings,
                   accounts: Callable[[str], Account | None]) -> Account:
    """The account the job runs as (module docstring); RunAsError when there is none allowed."""
    owner = job.eval("Owner")
    if isinstance(owner, str) and owner and owner_allowed(job, settings):
        account = accounts(owner)
        if account is not None:
            return account  # root's own job included (module docstring)
    knob, name = _slot_user(slot_number, settings)
    account = accounts(name)
    if account is None:
        raise RunAsError(f"{knob} names the account {name!r}, which does not exist on this machine")
    if account.uid == 0:
        raise RunAsError(f"{knob} names the superuser {name!r}; a job never runs as root")
    return account


def _slot_user(slot_number: int | None, settings: RunAsSettings) -> tuple[str, str]:
    """The knob that names the slot's account, and that account."""
    if slot_number is not None and slot_number in settings.slot_users:
        return f"SLOT{slot_number}_USER", settings.slot_users[slot_number]
    if settings.nobody_slot_user:
        return "NOBODY_SLOT_USER", settings.nobody_slot_user
    return "the default slot user", NOBODY


def os_account(name: str) -> Account | None:
    """``name``'s account in this machine's password database, with its groups; None when none."""
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        return None
    try:
        groups = tuple(os.getgrouplist(entry.pw_name, entry.pw_gid))
    except OSError:
        groups = (entry.pw_gid,)
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid, groups, entry.pw_dir or "/")


__all__ = ["NOBODY", "Account", "RunAsError", "RunAsSettings", "decide_account", "os_account",
           "owner_allowed", "run_as_settings"]
