"""The accounting and policy passes of the job builder: whose job it is and when it runs.

``accounting`` turns ``accounting_group``, ``accounting_group_user`` and
``nice_user`` into ``AcctGroup``, ``AcctGroupUser`` and ``AccountingGroup``
(``group.user``, or the user alone without a group; nice_user means the group
``NICE_USER_ACCOUNTING_GROUP_NAME`` and ``MaxJobRetirementTime = 0``).
``deferral`` writes the ``cron_*`` and ``deferral_*`` attributes with their
window, preparation time and ``ScheddInterval``. ``policy`` writes the
on-exit and periodic expressions and folds ``max_retries``, ``retry_until``
and ``success_exit_code`` into ``OnExitRemove``. All are passes of
``JobBuilder`` (``htcpool.submit.jobad``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from htcpool.classad.nodes import Literal
from htcpool.submit.tables import CRON_COMMANDS, POLICY_COMMANDS

if TYPE_CHECKING:
    from htcpool.submit.jobad import JobBuilder


def accounting(b: JobBuilder) -> None:
    group = b.get("accounting_group", "AcctGroup")
    user = b.get("accounting_group_user", "AcctGroupUser")
    nice = b.get_bool("nice_user")
    if nice and group:
        b.warn("nice_user conflicts with accounting_group; nice_user is ignored")
    elif nice:
        group = b.settings.nice_user_accounting_group_name
        if "MaxJobRetirementTime" not in b.ad:
            b.ad["MaxJobRetirementTime"] = 0
    if group:
        user = user or b.host.user
        b.ad["AcctGroup"] = group
        b.ad["AcctGroupUser"] = user
        b.ad["AccountingGroup"] = f"{group}.{user}"
    elif user:
        b.ad["AcctGroupUser"] = user
        b.ad["AccountingGroup"] = user


def deferral(b: JobBuilder) -> None:
    cron = False
    for key, attr in CRON_COMMANDS:
        value = b.get(key, attr)
        if value:
            b.ad[attr] = value
            cron = True
    deferral_time = b.get("deferral_time", "DeferralTime")
    if deferral_time:
        if b.universe == 7:
            raise b.fail("deferral_time is not supported for scheduler universe jobs",
                            "deferral_time")
        node = b.set_expr("DeferralTime", deferral_time, "deferral_time")
        if isinstance(node, Literal) and (not isinstance(node.value, int) or node.value < 0):
            raise b.fail(f"deferral_time must be a non-negative integer, not {deferral_time}",
                            "deferral_time")
    if not (cron or deferral_time):
        return
    window = b.get("cron_window", "deferral_window", "DeferralWindow") or "0"
    prep = b.get("cron_prep_time", "deferral_prep_time", "DeferralPrepTime") or "300"
    b.set_expr("DeferralWindow", window, "cron_window", "deferral_window")
    b.set_expr("DeferralPrepTime", prep, "cron_prep_time", "deferral_prep_time")
    b.ad["ScheddInterval"] = b.settings.schedd_interval


def policy(b: JobBuilder) -> None:
    for key, attr, default in POLICY_COMMANDS:
        value = b.get(key, attr)
        if value:
            b.set_expr(attr, value, key, attr)
        elif default is not None and b.settings.submit_insert_default_policy_exprs:
            b.set_expr(attr, default)
    retries = b.get("max_retries", "JobMaxRetries")
    until = b.get("retry_until")
    success = b.get("success_exit_code", "JobSuccessExitCode")
    if retries or until or success:
        b.set_expr("JobMaxRetries", retries or str(b.settings.default_job_max_retries),
                      "max_retries")
        if success:
            b.set_expr("JobSuccessExitCode", success, "success_exit_code")
        remove = f"NumJobCompletions > JobMaxRetries || ExitCode =?= {'JobSuccessExitCode' if success else '0'}"
        if until:
            clause = f"ExitCode =?= {until}" if until.lstrip("-").isdigit() else until
            remove += f" || {clause}"
        user_remove = b.get("on_exit_remove")
        if user_remove:
            remove += f" || ({user_remove})"
        b.set_expr("OnExitRemove", remove, "retry_until", "max_retries")
