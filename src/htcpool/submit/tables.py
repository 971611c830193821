"""Submit commands as data: which command sets which job attribute, and how.

``SIMPLE_COMMANDS`` lists (command, attribute, kind) where kind is ``expr``
(a ClassAd expression), ``string`` (the text as a string), ``unquoted`` (a
string without its surrounding quotes), ``bool`` (a boolean command) or
``signal`` (a signal name or number, stored as its name). ``POLICY_COMMANDS`` lists the
job policy expressions with the default condor_submit inserts when
``SUBMIT_INSERT_DEFAULT_POLICY_EXPRS`` is true. ``BASE_ATTRIBUTES`` are the
counters every new job ad starts with.
"""

from __future__ import annotations

NOTIFICATION = {"never": 0, "always": 1, "complete": 2, "error": 3, "start": 4}

SIMPLE_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("priority", "JobPrio", "expr"),
    ("prio", "JobPrio", "expr"),
    ("kill_sig", "KillSig", "signal"),
    ("remove_kill_sig", "RemoveKillSig", "signal"),
    ("hold_kill_sig", "HoldKillSig", "signal"),
    ("kill_sig_timeout", "KillSigTimeout", "expr"),
    ("job_max_vacate_time", "JobMaxVacateTime", "expr"),
    ("max_job_retirement_time", "MaxJobRetirementTime", "expr"),
    ("job_lease_duration", "JobLeaseDuration", "expr"),
    ("keep_claim_idle", "KeepClaimIdle", "expr"),
    ("want_graceful_removal", "WantGracefulRemoval", "expr"),
    ("allowed_job_duration", "AllowedJobDuration", "expr"),
    ("allowed_execute_duration", "AllowedExecuteDuration", "expr"),
    ("next_job_start_delay", "NextJobStartDelay", "expr"),
    ("job_machine_attrs_history_length", "JobMachineAttrsHistoryLength", "expr"),
    ("job_machine_attrs", "JobMachineAttrs", "string"),
    ("batch_name", "JobBatchName", "string"),
    ("description", "JobDescription", "string"),
    ("notify_user", "NotifyUser", "string"),
    ("project_name", "ProjectName", "string"),
    ("coresize", "CoreSize", "expr"),
    ("container_target_dir", "ContainerTargetDir", "unquoted"),
    ("transfer_container", "TransferContainer", "bool"),
    ("container_is_common", "ContainerIsCommon", "bool"),
)

POLICY_COMMANDS: tuple[tuple[str, str, str | None], ...] = (
    ("on_exit_hold", "OnExitHold", "false"),
    ("on_exit_hold_reason", "OnExitHoldReason", None),
    ("on_exit_hold_subcode", "OnExitHoldSubCode", None),
    ("on_exit_remove", "OnExitRemove", "true"),
    ("periodic_hold", "PeriodicHold", "false"),
    ("periodic_hold_reason", "PeriodicHoldReason", None),
    ("periodic_hold_subcode", "PeriodicHoldSubCode", None),
    ("periodic_release", "PeriodicRelease", "false"),
    ("periodic_remove", "PeriodicRemove", "false"),
    ("periodic_vacate", "PeriodicVacate", None),
)

CRON_COMMANDS: tuple[tuple[str, str], ...] = (
    ("cron_minute", "CronMinute"),
    ("cron_hour", "CronHour"),
    ("cron_day_of_month", "CronDayOfMonth"),
    ("cron_month", "CronMonth"),
    ("cron_day_of_week", "CronDayOfWeek"),
)

BASE_ATTRIBUTES: tuple[tuple[str, object], ...] = (
    ("MaxHosts", 1), ("MinHosts", 1), ("CurrentHosts", 0), ("NumCkpts", 0), ("ExitStatus", 0),
    ("NumRestarts", 0), ("ExitBySignal", False), ("NumJobStarts", 0), ("RemoteSysCpu", 0.0),
    ("RemoteUserCpu", 0.0), ("CommittedTime", 0), ("NumSystemHolds", 0), ("TotalSuspensions", 0),
    ("CommittedSlotTime", 0), ("NumJobCompletions", 0), ("CumulativeSlotTime", 0),
    ("LastSuspensionTime", 0), ("RemoteWallClockTime", 0.0), ("CumulativeRemoteSysCpu", 0.0),
    ("CommittedSuspensionTime", 0), ("CumulativeRemoteUserCpu", 0.0),
    ("CumulativeSuspensionTime", 0),
)

SIGNALS = {
    1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
    8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
    14: "SIGALRM", 15: "SIGTERM", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP", 20: "SIGTSTP",
}


def signal_name(value: str) -> str:
    """A signal given by name (with or without SIG) or number, as its canonical name."""
    text = value.strip().strip('"').upper()
    if text.isdigit():
        return SIGNALS.get(int(text), text)
    return text if text.startswith("SIG") else "SIG" + text
