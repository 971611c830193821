"""The ``htcpool`` command: one entry point, a subcommand per tool.

Subcommands are looked up in a table of name → ``module:function``; each
function takes the remaining arguments and returns the exit status, so every
tool parses its own options (HTCondor tools use single-dash long options,
which argparse handles) and the top level stays thin.

No traceback reaches a user (docs/reliability.md): ``main`` runs the tool under
one guard that turns anything the tool did not handle itself into one line on
standard error naming the tool (``condor_q: error: …``) and a non-zero exit
status: 1 for an error, 130 for an interrupt (Ctrl-C), 141 when the reader of
the output went away (``| head``). Setting ``HTCPOOL_TRACEBACK=1`` prints the
traceback as well, for whoever debugs htcpool itself.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("htcpool.cli.demo", "Run the personal-pool demonstration (the README's first command)"),
    "classad-demo": ("htcpool.cli.classad_demo", "Show a job ad matched against three machine ads"),
    "classad": ("htcpool.cli.classad_tool", "Evaluate ClassAd expressions and match ads"),
    "config_val": ("htcpool.cli.config_val", "Query the configuration (condor_config_val)"),
    "up": ("htcpool.cli.pool:up", "Start a personal pool"),
    "down": ("htcpool.cli.pool:down", "Stop the personal pool"),
    "on": ("htcpool.cli.pool:on", "Start daemons (condor_on)"),
    "off": ("htcpool.cli.pool:off", "Stop daemons (condor_off)"),
    "restart": ("htcpool.cli.pool:restart", "Restart daemons (condor_restart)"),
    "reconfig": ("htcpool.cli.pool:reconfig", "Re-read the configuration (condor_reconfig)"),
    "submit": ("htcpool.cli.submit", "Submit jobs, or print their ads with -dry-run (condor_submit)"),
    "q": ("htcpool.cli.qfast", "Show the job queue (condor_q)"),
    "status": ("htcpool.cli.status", "Show the pool's slots and daemons (condor_status)"),
    "userprio": ("htcpool.cli.userprio", "Show or change user priorities (condor_userprio)"),
    "prio": ("htcpool.cli.jobs:prio", "Change job priorities (condor_prio)"),
    "hold": ("htcpool.cli.jobs:hold", "Hold jobs (condor_hold)"),
    "release": ("htcpool.cli.jobs:release", "Release held jobs (condor_release)"),
    "rm": ("htcpool.cli.jobs:rm", "Remove jobs (condor_rm)"),
    "vacate_job": ("htcpool.cli.jobs:vacate_job", "Vacate running jobs (condor_vacate_job)"),
    "vacate": ("htcpool.cli.drain:vacate", "Vacate every job of a machine (condor_vacate)"),
    "drain": ("htcpool.cli.drain:drain", "Drain a machine (condor_drain)"),
    "history": ("htcpool.cli.history", "Jobs that left the queue (condor_history)"),
    "who": ("htcpool.cli.drain:who", "Jobs running on this machine (condor_who)"),
    "reschedule": ("htcpool.cli.drain:reschedule", "Negotiate now (condor_reschedule)"),
    "suspend": ("htcpool.cli.jobs:suspend", "Suspend running jobs (condor_suspend)"),
    "continue": ("htcpool.cli.jobs:continue_", "Resume suspended jobs (condor_continue)"),
    "qedit": ("htcpool.cli.qedit", "Change job attributes (condor_qedit)"),
    "wait": ("htcpool.cli.wait", "Wait for jobs of a user log to finish (condor_wait)"),
    "watch_q": ("htcpool.cli.watch_q", "Watch jobs' progress, cluster by cluster (condor_watch_q)"),
    "tail": ("htcpool.cli.tail", "Show a running job's output (condor_tail)"),
    "classad_eval": ("htcpool.cli.classad_eval", "Evaluate ClassAd expressions (classad_eval)"),
    "version": ("htcpool.cli.version", "Print the version (condor_version)"),
    "master": ("htcpool.cli.pool:master", "Start the pool the configuration describes (condor_master)"),
    "gpu_discovery": ("htcpool.cli.gpu_discovery", "Detect GPUs and print them as a ClassAd (condor_gpu_discovery)"),
    "sim": ("htcpool.cli.sim", "Simulate a pool's policy on a workload, or sweep knobs (htcpool sim sweep)"),
    "token_create": ("htcpool.cli.token:create", "Make an identity token (condor_token_create)"),
    "token_list": ("htcpool.cli.token:list_tokens", "List the user's tokens (condor_token_list)"),
    "ping": ("htcpool.cli.ping", "Show this client's identity and levels at a daemon (condor_ping)"),
}


#: the HTCondor name the tool was started under (``condor_q``), for its messages; None for ``htcpool``
INVOKED_AS: str | None = None


def _usage() -> str:
    lines = ["usage: htcpool COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<13} {help_text}" for name, (_, help_text) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the tool ``argv[0]`` names with the rest of ``argv``; its exit status."""
    args = sys.argv[1:] if argv is None else argv
    try:
        return _run(args)
    except KeyboardInterrupt:
        print(f"{_tool(args)}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _quiet_stdout()
        return 141
    except Exception as e:  # the guard: anything a tool did not handle becomes one line
        if os.environ.get("HTCPOOL_TRACEBACK"):
            import traceback  # only here: 5 ms of every tool's start

            traceback.print_exc()
        print(f"{_tool(args)}: error: {describe_failure(e)}", file=sys.stderr)
        return 1


def _tool(args: list[str]) -> str:
    """The tool as the user typed it: ``condor_q``, or ``htcpool q``."""
    if INVOKED_AS is not None:
        return INVOKED_AS
    return f"htcpool {args[0]}" if args and args[0] in COMMANDS else "htcpool"


def describe_failure(error: BaseException) -> str:
    """One line saying what went wrong, in words a user can act on (never a traceback)."""
    module = type(error).__module__ or ""
    text = " ".join(str(error).split())
    if module.startswith(("httpx", "httpcore", "h11", "http.client")):
        what = "lost contact with the daemon"  # it died or closed the connection mid-request
    elif isinstance(error, UnicodeDecodeError):
        what, text = "input is not valid UTF-8 text", ""
    elif isinstance(error, UnicodeEncodeError):
        what, text = "the output cannot be written in this terminal's encoding", ""
    elif isinstance(error, OSError):
        if error.strerror:
            what, text = error.strerror, str(error.filename or "")
        else:
            what = type(error).__name__
    elif isinstance(error, MemoryError):
        what, text = "out of memory", ""
    elif isinstance(error, RecursionError):
        what, text = "input nested too deeply", ""
    elif isinstance(error, OverflowError):
        what = "a number is too large"
    else:
        what = type(error).__name__
    line = f"{what}: {text}" if text else what
    return line if len(line) <= 300 else line[:299] + "…"


def _quiet_stdout() -> None:
    """After the reader of standard output left, stop Python complaining when it flushes."""
    with contextlib.suppress(OSError, ValueError):  # no terminal to restore: nothing more to do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _run(args: list[str]) -> int:
    if not args or args[0] in ("-h", "-help", "--help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    entry = COMMANDS.get(name)
    if entry is None:
        print(f"htcpool: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    module_name, _, function = entry[0].partition(":")
    module = importlib.import_module(module_name)
    status: int = getattr(module, function or "main")(rest)
    return status
