"""Late materialization: a submission kept as a recipe, and the jobs made from it one by one.

A submit description with ``max_materialize`` or ``max_idle`` (``materialize_max_idle``)
becomes a job factory (the HTCondor manual's "Submitting Lots of Jobs"): condor_submit
sends one cluster ad and a recipe for the jobs (``SubmitDigest``, after the manual's name for
it), and the schedd makes each job when its limits allow. Here the recipe is everything the
submit core needs to build any proc of the cluster again, away from the submitting machine:

* the submit text as it was run (with ``-append`` lines and a ``-queue`` replacement),
  the cluster id and the submit file's name;
* the ``SubmitHost`` facts, with only the environment variables the description read;
* the ``SubmitSettings`` (the pool's submit knobs as the client read them);
* every answer the file system gave while the first job was built (``RecordingFileSystem``):
  executable and input sizes, included files, the lines of ``queue … from FILE`` (the
  item data), the listings of ``queue … matching``.

``Materializer(recipe)`` replays the description up to its queue statement once, then
``build(proc)`` makes proc ``proc``'s ad with the per-job macros of that proc (``Process``,
``Step``, ``Row``, ``ItemIndex``, ``Item`` and the loop variables). A file the first job did
not look at is taken to exist with size 0: the schedd does not check the submitter's files.
As HTCondor does, only the first queue statement counts, and ``$RANDOM_*`` functions give
each job the same value only when the first job's ad did not read a per-job macro (then
every proc is a copy of the first with its ``ProcId``).

``digest_to_json``/``digest_from_json`` give the plain JSON form carried in a
``SubmitFactory`` message and kept by the schedd; a recipe that does not read back raises
``DigestError`` naming the field.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from htcpool.classad import ClassAd
from htcpool.submit.errors import SubmitError
from htcpool.submit.settings import SubmitSettings
from htcpool.submit.world import FileSystemView, SubmitHost

DIGEST_VERSION = 1
#: the submit commands that make a submission a factory (HTCondor's names)
FACTORY_COMMANDS = ("max_materialize", "max_idle", "materialize_max_idle")


class DigestError(SubmitError):
    """A recipe that cannot be read back (a damaged row, a message from another version)."""


@dataclass(frozen=True)
class FactoryLimits:
    """The factory's limits from the submit file: 0 means no limit of that kind."""

    max_materialize: int = 0
    max_idle: int = 0
    total: int = 0  # the jobs the queue statement describes (TotalSubmitProcs)


class RecordingEnviron(Mapping[str, str]):
    """The submitter's environment, noting every variable the description reads."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ
        self.read: dict[str, str] = {}

    def __getitem__(self, key: str) -> str:
        value = self._environ[key]
        self.read[key] = value
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._environ)

    def __len__(self) -> int:
        return len(self._environ)


@dataclass
class RecordingFileSystem:
    """A ``FileSystemView`` that answers from ``inner`` and keeps every answer it gave."""

    inner: FileSystemView
    sizes: dict[str, int | None] = field(default_factory=dict)
    texts: dict[str, str | None] = field(default_factory=dict)
    dirs: dict[str, list[tuple[str, bool]] | None] = field(default_factory=dict)

    def size(self, path: str) -> int | None:
        if path not in self.sizes:
            self.sizes[path] = self.inner.size(path)
        return self.sizes[path]

    def read_text(self, path: str) -> str | None:
        if path not in self.texts:
            self.texts[path] = self.inner.read_text(path)
        return self.texts[path]

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        if path not in self.dirs:
            self.dirs[path] = self.inner.list_dir(path)
        return self.dirs[path]


@dataclass
class ReplayFileSystem:
    """The recorded answers, on the schedd; a file nobody looked at exists with size 0."""

    sizes: dict[str, int | None]
    texts: dict[str, str | None]
    dirs: dict[str, list[tuple[str, bool]] | None]

    def size(self, path: str) -> int | None:
        return self.sizes.get(path, 0)

    def read_text(self, path: str) -> str | None:
        return self.texts.get(path)

    def list_dir(self, path: str) -> list[tuple[str, bool]] | None:
        return self.dirs.get(path)


@dataclass(frozen=True)
class SubmitDigest:
    """What the schedd keeps of a factory's submission (see the module docstring)."""

    text: str
    cluster: int
    host: SubmitHost
    settings: SubmitSettings
    files: ReplayFileSystem
    file: str = ""
    extra_commands: tuple[str, ...] = ()
    queue_args: str | None = None


def digest_to_json(digest: SubmitDigest) -> dict[str, Any]:
    """The recipe as plain JSON values."""
    host = dataclasses.asdict(digest.host)
    host["environ"] = dict(digest.host.environ)
    files = digest.files
    return {
        "version": DIGEST_VERSION, "text": digest.text, "cluster": digest.cluster, "file": digest.file,
        "extra_commands": list(digest.extra_commands), "queue_args": digest.queue_args,
        "host": host, "settings": dataclasses.asdict(digest.settings),
        "files": {"sizes": dict(files.sizes), "texts": dict(files.texts),
                  "dirs": {p: None if d is None else [[n, bool(is_dir)] for n, is_dir in d]
                           for p, d in files.dirs.items()}},
    }


def _tuples(value: Any) -> Any:
    """JSON lists back to the tuples the settings hold."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def digest_from_json(data: Mapping[str, Any]) -> SubmitDigest:
    """A recipe from its JSON form; DigestError names what is wrong."""
    if not isinstance(data, Mapping) or data.get("version") != DIGEST_VERSION:
        raise DigestError(f"the submit digest is not version {DIGEST_VERSION} of htcpool's form")
    try:
        host = SubmitHost(**data["host"])
        settings = SubmitSettings(**{k: _tuples(v) for k, v in data["settings"].items()})
        files = data["files"]
        replay = ReplayFileSystem(
            {str(p): None if s is None else int(s) for p, s in files["sizes"].items()},
            {str(p): None if t is None else str(t) for p, t in files["texts"].items()},
            {str(p): None if d is None else [(str(n), bool(is_dir)) for n, is_dir in d]
             for p, d in files["dirs"].items()})
        queue_args = data.get("queue_args")
        return SubmitDigest(str(data["text"]), int(data["cluster"]), host, settings, replay,
                            str(data.get("file", "")), tuple(str(x) for x in data.get("extra_commands", ())),
                            None if queue_args is None else str(queue_args))
    except (KeyError, TypeError, ValueError) as e:
        raise DigestError(f"the submit digest does not read back: {type(e).__name__} {e}") from None


def recorded_digest(text: str, cluster: int, host: SubmitHost, environ: RecordingEnviron,
                    settings: SubmitSettings, fs: RecordingFileSystem, *, file: str = "",
                    extra_commands: list[str] | None = None, queue_args: str | None = None) -> SubmitDigest:
    """The recipe of a submission that ran with ``environ`` and ``fs`` recording."""
    kept_host = dataclasses.replace(host, environ=dict(environ.read))
    return SubmitDigest(text, cluster, kept_host, settings,
                        ReplayFileSystem(dict(fs.sizes), dict(fs.texts), dict(fs.dirs)),
                        file, tuple(extra_commands or ()), queue_args)


class Materializer:
    """Builds the jobs of a factory from its recipe (``build(proc)``)."""

    def __init__(self, digest: SubmitDigest) -> None:
        from htcpool.submit.session import replay_factory

        self.digest = digest
        self._run = replay_factory(digest)
        plan = self._run.plan
        assert plan is not None  # replay_factory raises when there is no queue statement
        self.total = plan.jobs()
        #: jobs made from each item of the queue statement (its count)
        self.per_item = max(plan.count, 1)
        self.limits = self._run.limits
        self._template: ClassAd | None = None

    def build(self, proc: int) -> ClassAd:
        """Proc ``proc``'s job ad; SubmitError when the description fails for it."""
        if not 0 <= proc < self.total:
            raise DigestError(f"proc {proc} is outside the factory's {self.total} jobs")
        if self._template is not None:
            ad = self._template.copy()
            ad["ProcId"] = proc
            return ad
        ad, per_job = self._run.build_proc(proc)
        if not per_job:
            self._template = ad.copy()
        return ad

    @property
    def warnings(self) -> list[str]:
        return list(self._run.builder.warnings)


__all__ = ["FACTORY_COMMANDS", "DigestError", "FactoryLimits", "Materializer", "RecordingEnviron",
           "RecordingFileSystem", "ReplayFileSystem", "SubmitDigest", "digest_from_json", "digest_to_json",
           "recorded_digest"]
