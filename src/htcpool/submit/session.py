"""Running a submit description: statements in order, jobs at each ``queue``.

``submit_description`` walks the statements of a submit file. Assignments go
into the submit hash; ``if``/``elif``/``else``/``endif`` switch statements on
and off through the configuration language's
:class:`~htcpool.config.conditions.IfStack` (conditions are expanded, then read as a
number, a boolean, ``defined NAME``, ``version …``, or — condor_submit's addition —
a ClassAd expression, evaluated with no ad); ``include`` reads another file
through the file-system view; each ``queue`` statement makes its jobs with the
commands as they stand at that point. All jobs of one description share one
cluster and number their procs from 0.

A job ad is built in full for the first job of each queue statement. When
building it touched no per-job macro (``$(Process)``, ``$(Item)``, …) and no
random function, the other jobs of that statement are copies that differ
only in ``ProcId``; otherwise each job is built on its own.

With ``allow_factory`` a description that sets ``max_materialize`` or ``max_idle``
(``materialize_max_idle``) by its first queue statement, or any description with
``force_factory`` (condor_submit's ``-factory``), is a late-materialization factory
(``htcpool.submit.materialize``): only its first job is built, ``SubmitResult.factory`` holds its
limits, and later queue statements are ignored with a warning, as HTCondor does.
``replay_factory`` runs a recipe up to its queue statement for the schedd, which then
builds any proc with ``build_proc``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError, ClassAdParseError
from htcpool.config.conditions import ConditionError, IfStack
from htcpool.gcpause import paused_gc
from htcpool.submit.errors import SubmitError, SubmitFileError
from htcpool.submit.hash import SubmitHash
from htcpool.submit.jobad import JobBuilder
from htcpool.submit.limits import check_integer, clip
from htcpool.submit.materialize import FACTORY_COMMANDS, FactoryLimits, SubmitDigest
from htcpool.submit.queue import QueuePlan, parse_queue
from htcpool.submit.settings import SubmitSettings
from htcpool.submit.source import Assign, Conditional, Include, Queue, Statement, read_statements
from htcpool.submit.world import FileSystemView, MemoryFileSystem, SubmitHost

MAX_INCLUDE_DEPTH = 20


@dataclass
class SubmitResult:
    """The jobs of one submit description, with the warnings condor_submit would print."""

    cluster_id: int
    jobs: list[ClassAd] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: a late-materialization factory: its limits (``jobs`` then holds its first job only)
    factory: FactoryLimits | None = None


def classad_condition(text: str, now: float | None = None) -> bool:
    """A complex ``if`` condition, evaluated as a ClassAd expression with no ad.

    ``now`` is the time ``time()`` answers (the submit time; None: no clock, and a
    condition that reads the time is an error). Numbers and booleans decide it;
    anything else (undefined, error, a string) and text that does not parse raise
    :class:`ConditionError` saying why.
    """
    context = EvalContext(clock=None if now is None else fixed_clock(now))
    try:
        result = ExprTree(text).evaluate(context=context)
    except ClassAdParseError:
        raise ConditionError("it is not a valid ClassAd expression") from None
    except ClassAdError as e:
        raise ConditionError(f"it cannot be evaluated ({e})") from None
    if isinstance(result, bool | int | float):
        return bool(result)
    raise ConditionError("it does not evaluate to a boolean or a number")


class _Run:
    def __init__(self, file: str, host: SubmitHost, fs: FileSystemView, settings: SubmitSettings,
                 cluster_id: int, extra: list[str], *, allow_factory: bool = False,
                 force_factory: bool = False, replay: bool = False) -> None:
        self.file = file
        self.host = host
        self.fs = fs
        self.hash = SubmitHash(host, file)
        self.builder = JobBuilder(self.hash, settings, host, fs, file)
        self.result = SubmitResult(cluster_id)
        # One stack for the whole description: an included file shares its includer's blocks.
        self.ifs = IfStack(lambda text: classad_condition(text, host.now))
        self.extra = extra
        self.allow_factory = allow_factory or force_factory or replay
        self.force_factory = force_factory or replay
        self.replay = replay
        #: a factory's queue statement and limits, once its first queue statement ran
        self.plan: QueuePlan | None = None
        self.limits = FactoryLimits()

    def run(self, statements: list[Statement], depth: int = 0) -> None:
        for st in statements:
            if isinstance(st, Conditional):
                self.conditional(st)
            elif not self.ifs.enabled():
                continue
            elif isinstance(st, Assign):
                if st.append:
                    self.hash.append(st.key, st.value, st.line)
                else:
                    self.hash.set(st.key, st.value, st.line)
            elif isinstance(st, Include):
                self.include(st, depth)
            elif isinstance(st, Queue):
                for line in self.extra:
                    key, _, value = line.partition("=")
                    self.hash.set(key.strip(), value.strip())
                self.extra = []
                self.queue(st)
        if depth == 0 and self.ifs.inside_if():
            raise SubmitFileError("missing endif at the end of the submit file", self.file)

    def include(self, st: Include, depth: int) -> None:
        path = self.host.absolute(self.hash.expand(st.path))
        try:
            text = self.fs.read_text(path)  # a file past the size limit raises (submit.limits)
        except SubmitError as e:
            raise SubmitFileError(str(e), self.file, st.line) from None
        if text is None:
            if st.if_exists:
                return
            raise SubmitFileError(f"cannot open include file {path}", self.file, st.line)
        if depth >= MAX_INCLUDE_DEPTH:
            raise SubmitFileError("includes are nested too deeply", self.file, st.line)
        self.run(read_statements(text, path), depth + 1)

    def conditional(self, st: Conditional) -> None:
        line = f"{st.keyword} {st.condition}".rstrip()
        try:
            self.ifs.handle(line, self.hash.expand, self.hash.lookup)
        except ConditionError as exc:
            raise SubmitFileError(str(exc), self.file, st.line) from None

    def queue(self, st: Queue) -> None:
        if self.plan is not None:  # a factory: only the first queue statement counts
            self.builder.warn(f"late materialization uses only the first queue statement; "
                              f"'{st.text}' (line {st.line}) is ignored")
            return
        try:
            plan = parse_queue(self.hash.expand(st.args), self.fs, self.host.cwd, now=self.host.now)
        except SubmitError as e:
            raise SubmitFileError(str(e), self.file, st.line, st.text) from None
        if self.allow_factory and self._factory(plan):
            return
        for command in FACTORY_COMMANDS:  # not a factory here: the limits are known, not typos
            self.hash.get_entry(command)
        self._check_job_count(plan, st)
        cluster = self.result.cluster_id
        rows = plan.rows if plan.rows is not None else ((),)
        template: ClassAd | None = None
        for row_index, row in enumerate(rows):
            for step in range(plan.count):
                proc = len(self.result.jobs)
                if template is not None:
                    ad = template.copy()
                    ad["ProcId"] = proc
                    self.result.jobs.append(ad)
                    continue
                self.hash.set_job(_job_vars(cluster, proc, plan.variables, row, step, row_index))
                self.hash.touched_job = False
                self.hash.expander.used_random = False
                ad = self.builder.build(cluster, proc)
                self.result.jobs.append(ad)
                if not self.hash.touched_job and not self.hash.expander.used_random:
                    template = ad
        self.hash.set_job({})

    def _check_job_count(self, plan: QueuePlan, st: Queue) -> None:
        """Refuse, before building any, more jobs than MAX_JOBS_PER_SUBMISSION allows."""
        most = self.builder.settings.max_jobs_per_submission
        total = len(self.result.jobs) + plan.jobs()
        if 0 < most < total:
            raise SubmitFileError(f"Number of submitted jobs would exceed MAX_JOBS_PER_SUBMISSION "
                                  f"({total} > {most})", self.file, st.line, st.text)

    def _factory(self, plan: QueuePlan) -> bool:
        """Take ``plan`` as a factory's when the description asks for one; builds its first job."""
        limits = {}
        for command in FACTORY_COMMANDS:
            text = self.hash.get_entry(command)
            if text is None:
                continue
            value, line = text
            try:
                number = check_integer(command, int(self.hash.expand(value).strip()))
            except ValueError:
                raise SubmitFileError(f"{command} must be an integer, not '{clip(value)}'", self.file,
                                      line, command) from None
            except SubmitError as e:
                raise SubmitFileError(str(e), self.file, line, command) from None
            if number < 0:
                raise SubmitFileError(f"{command} must not be negative", self.file, line, command)
            limits["max_materialize" if command == "max_materialize" else "max_idle"] = number
        if not limits and not self.force_factory:
            return False
        self.plan = plan
        self.limits = FactoryLimits(limits.get("max_materialize", 0), limits.get("max_idle", 0), plan.jobs())
        self.result.factory = self.limits
        if not self.replay and plan.jobs():
            self.result.jobs.append(self.build_proc(0)[0])
        return True

    def build_proc(self, proc: int) -> tuple[ClassAd, bool]:
        """A factory's proc ``proc``, and whether building it read a per-job macro or a random
        function (if not, every proc is the same but for ``ProcId``)."""
        plan = self.plan
        assert plan is not None
        count = max(plan.count, 1)
        row_index, step = divmod(proc, count)
        row = plan.rows[row_index] if plan.rows is not None else ()
        cluster = self.result.cluster_id
        self.hash.set_job(_job_vars(cluster, proc, plan.variables, row, step, row_index))
        self.hash.touched_job = False
        self.hash.expander.used_random = False
        ad = self.builder.build(cluster, proc)
        return ad, self.hash.touched_job or self.hash.expander.used_random

    def finish(self) -> SubmitResult:
        self.result.warnings = list(self.builder.warnings)
        if not self.builder.settings.warn_on_unused_submit_file_macros:
            return self.result
        for entry in self.hash.unused():
            self.result.warnings.append(
                f"the line '{entry.name} = {entry.value}' was unused by condor_submit. Is it a typo?")
        return self.result


def _job_vars(cluster: int, proc: int, variables: tuple[str, ...], row: tuple[str, ...], step: int,
              row_index: int) -> dict[str, str]:
    """The per-job macros of one job (keys lower case)."""
    job_vars = {"cluster": str(cluster), "clusterid": str(cluster), "process": str(proc),
                "procid": str(proc), "step": str(step), "row": str(row_index),
                "itemindex": str(row_index), "jobid": f"{cluster}.{proc}"}
    for name, value in zip(variables, row, strict=False):
        job_vars[name.lower()] = value
    return job_vars


def submit_description(text: str, *, file: str = "", host: SubmitHost | None = None,
                       fs: FileSystemView | None = None, settings: SubmitSettings | None = None,
                       cluster_id: int = 1, extra_commands: list[str] | None = None,
                       queue_args: str | None = None, allow_factory: bool = False,
                       force_factory: bool = False) -> SubmitResult:
    """Build the job ads of a submit description.

    ``extra_commands`` are ``name = value`` lines applied before the first queue
    statement (condor_submit's ``-append``); ``queue_args`` replaces the file's
    queue statements (``-queue``). With ``allow_factory`` (or ``force_factory``) the
    description may be a late-materialization factory (see the module docstring).
    Bad input raises ``SubmitFileError``.
    """
    run = _Run(file, host or SubmitHost(), fs or MemoryFileSystem(), settings or SubmitSettings(),
               cluster_id, list(extra_commands or []), allow_factory=allow_factory,
               force_factory=force_factory)
    with paused_gc():  # a large cluster is many ads and no cycles (htcpool.gcpause)
        _execute(run, text, file, queue_args)
    return run.finish()


def replay_factory(digest: SubmitDigest) -> _Run:
    """The recipe's description run up to its queue statement, ready for ``build_proc``."""
    run = _Run(digest.file, digest.host, digest.files, digest.settings, digest.cluster,
               list(digest.extra_commands), replay=True)
    _execute(run, digest.text, digest.file, digest.queue_args)
    return run


def _execute(run: _Run, text: str, file: str, queue_args: str | None) -> None:
    statements = read_statements(text, file)
    if queue_args is not None:
        statements = [s for s in statements if not isinstance(s, Queue)]
        statements.append(Queue(queue_args, 0, "queue " + queue_args))
    run.run(statements)
    if not any(isinstance(s, Queue) for s in statements):
        raise SubmitFileError("no queue statement in the submit file", file)
