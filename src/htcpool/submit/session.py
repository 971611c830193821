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
"""

from __future__ import annotations

from dataclasses import dataclass, field

from htcpool.classad import ClassAd, EvalContext, ExprTree, fixed_clock
from htcpool.classad.errors import ClassAdError, ClassAdParseError
from htcpool.config.conditions import ConditionError, IfStack
from htcpool.submit.errors import SubmitError, SubmitFileError
from htcpool.submit.hash import SubmitHash
from htcpool.submit.jobad import JobBuilder
from htcpool.submit.queue import parse_queue
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
                 cluster_id: int, extra: list[str]) -> None:
        self.file = file
        self.host = host
        self.fs = fs
        self.hash = SubmitHash(host, file)
        self.builder = JobBuilder(self.hash, settings, host, fs, file)
        self.result = SubmitResult(cluster_id)
        # One stack for the whole description: an included file shares its includer's blocks.
        self.ifs = IfStack(lambda text: classad_condition(text, host.now))
        self.extra = extra

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
        text = self.fs.read_text(path)
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
        try:
            plan = parse_queue(self.hash.expand(st.args), self.fs, self.host.cwd, now=self.host.now)
        except SubmitError as e:
            raise SubmitFileError(str(e), self.file, st.line, st.text) from None
        cluster = self.result.cluster_id
        rows = plan.rows if plan.rows is not None else ((),)
        template: ClassAd | None = None
        for row_index, row in enumerate(rows):
            for step in range(plan.count):
                proc = len(self.result.jobs)
                job_vars = {"cluster": str(cluster), "clusterid": str(cluster), "process": str(proc),
                            "procid": str(proc), "step": str(step), "row": str(row_index),
                            "itemindex": str(row_index), "jobid": f"{cluster}.{proc}"}
                for name, value in zip(plan.variables, row, strict=False):
                    job_vars[name.lower()] = value
                if template is not None:
                    ad = template.copy()
                    ad["ProcId"] = proc
                    self.result.jobs.append(ad)
                    continue
                self.hash.set_job(job_vars)
                self.hash.touched_job = False
                self.hash.expander.used_random = False
                ad = self.builder.build(cluster, proc)
                self.result.jobs.append(ad)
                if not self.hash.touched_job and not self.hash.expander.used_random:
                    template = ad
        self.hash.set_job({})

    def finish(self) -> SubmitResult:
        self.result.warnings = list(self.builder.warnings)
        if not self.builder.settings.warn_on_unused_submit_file_macros:
            return self.result
        for entry in self.hash.unused():
            self.result.warnings.append(
                f"the line '{entry.name} = {entry.value}' was unused by condor_submit. Is it a typo?")
        return self.result


def submit_description(text: str, *, file: str = "", host: SubmitHost | None = None,
                       fs: FileSystemView | None = None, settings: SubmitSettings | None = None,
                       cluster_id: int = 1, extra_commands: list[str] | None = None,
                       queue_args: str | None = None) -> SubmitResult:
    """Build the job ads of a submit description.

    ``extra_commands`` are ``name = value`` lines applied before the first queue
    statement (condor_submit's ``-append``); ``queue_args`` replaces the file's
    queue statements (``-queue``). Bad input raises ``SubmitFileError``.
    """
    run = _Run(file, host or SubmitHost(), fs or MemoryFileSystem(), settings or SubmitSettings(),
               cluster_id, list(extra_commands or []))
    statements = read_statements(text, file)
    if queue_args is not None:
        statements = [s for s in statements if not isinstance(s, Queue)]
        statements.append(Queue(queue_args, 0, "queue " + queue_args))
    run.run(statements)
    if not any(isinstance(s, Queue) for s in statements):
        raise SubmitFileError("no queue statement in the submit file", file)
    return run.finish()
