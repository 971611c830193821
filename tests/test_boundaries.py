"""The core/driver boundary: the languages and the decision cores read no clock and do no I/O.

The first rule of docs/architecture.md: time comes in as ``now`` and results go out as
returned state; nothing in a core sleeps, reads the wall clock, opens a socket, spawns a
process or touches a file. This test reads the source of every core (the languages ``classad``,
``config`` and ``submit``; the decision cores ``startd``, ``negotiator``, ``schedd``,
``collector`` and ``defrag``; the message package ``protocol``; the device package ``gpu``; the module
``deferral.py``) with :mod:`ast` and fails naming ``file:line`` for every use of:

* the clock and sleeping: ``time.time``/``monotonic``/``perf_counter``/``sleep``/
  ``localtime`` …, ``datetime.now``/``utcnow``/``today``, ``date.today``;
* I/O and concurrency: the modules ``asyncio``, ``socket``, ``subprocess``,
  ``threading``, ``multiprocessing``, ``selectors``, ``signal``, ``sqlite3``,
  ``shutil``, ``tempfile``, ``http``, ``urllib``, ``httpx`` …; the built-ins ``open``,
  ``print`` and ``input``; ``os`` beyond its pure path and name helpers; ``sys.stdin``/
  ``stdout``/``stderr``/``argv``/``exit``; ``pathlib``'s concrete paths;
* who the process is: ``getpass``, ``pwd``, ``grp``, ``platform``;
* randomness that is not injected: the ``random`` module's global functions, an
  unseeded ``random.Random()``, ``secrets``, ``uuid1``/``uuid4``;
* the drivers themselves: ``htcpool.runtime``, ``htcpool.cli``, ``htcpool.sim`` and the
  wall clock of ``htcpool.clock``.

The allow-list below is short and says why each entry must touch the world. Every
core is its own test case, so a failure names the package to fix.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "htcpool"

#: The language and core packages, and the core modules that sit at the top level.
CORE_PACKAGES = ("classad", "config", "submit", "startd", "negotiator", "schedd", "collector", "defrag",
                 "statistics", "protocol", "classad2", "gpu")
CORE_MODULES = ("deferral.py",)

FORBIDDEN_MODULES = frozenset({
    "asyncio", "socket", "socketserver", "ssl", "subprocess", "threading", "_thread", "multiprocessing",
    "concurrent", "selectors", "select", "signal", "sqlite3", "shutil", "tempfile", "glob", "http",
    "urllib", "httpx", "uvicorn", "starlette", "requests", "getpass", "pwd", "grp", "platform",
    "ctypes", "fcntl", "resource", "psutil", "secrets", "mmap", "webbrowser",
    "htcpool.runtime", "htcpool.cli", "htcpool.sim", "htcpool.clock",
})

FORBIDDEN_NAMES = frozenset({
    # the clock and sleeping
    "time.time", "time.time_ns", "time.monotonic", "time.monotonic_ns", "time.perf_counter",
    "time.perf_counter_ns", "time.process_time", "time.process_time_ns", "time.thread_time",
    "time.sleep", "time.localtime", "time.ctime", "time.asctime", "time.strftime", "time.mktime",
    "time.tzset", "time.timezone", "time.altzone", "time.tzname", "time.daylight",
    "datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today",
    "datetime.date.today",
    # the process's streams and arguments
    "sys.stdin", "sys.stdout", "sys.stderr", "sys.argv", "sys.exit",
    # randomness that is not injected
    "random.random", "random.randint", "random.randrange", "random.choice", "random.choices",
    "random.shuffle", "random.sample", "random.uniform", "random.gauss", "random.seed",
    "random.getrandbits", "random.randbytes", "random.triangular", "random.expovariate",
    "random.SystemRandom", "uuid.uuid1", "uuid.uuid4",
    # concrete paths read and write the disk
    "pathlib.Path", "pathlib.PosixPath", "pathlib.WindowsPath",
    # the built-ins that talk to the outside
    "builtins.open", "builtins.print", "builtins.input", "builtins.breakpoint",
})

#: ``os`` is allowed only for these pure helpers (names and path arithmetic).
OS_PURE = frozenset({
    "os.path.join", "os.path.basename", "os.path.dirname", "os.path.normpath", "os.path.split",
    "os.path.splitext", "os.path.isabs", "os.path.commonpath", "os.path.normcase", "os.sep",
    "os.fspath", "os.PathLike", "os.linesep", "os.pathsep", "os.curdir", "os.pardir", "os.path",
})

#: Files of the cores that must touch the world, what they may use, and why.
ALLOWED: dict[str, tuple[frozenset[str], str]] = {
    "config/files.py": (
        frozenset({"builtins.open", "subprocess", "os.*", "pwd"}),
        "read_config reads the configuration: the root file (CONDOR_CONFIG or the standard places, "
        "~condor's home among them), local files and directories, and the output of the commands "
        "HTCondor runs for 'include : cmd |'. Reading its sources is the configuration language's "
        "job; everything after reading is pure.",
    ),
    "config/probe.py": (
        frozenset({"builtins.open", "socket", "platform", "getpass", "pwd", "os.*"}),
        "probe_machine detects the machine for the DETECTED_* and host macros (CPUs, memory, host "
        "names and addresses, user, process ids), as HTCondor's configuration reader does before it "
        "reads a file; tests and simulations pass fake_machine() instead.",
    ),
    "config/gen_param_table.py": (
        frozenset({"pathlib.Path", "sys.argv", "sys.stderr", "builtins.print"}),
        "a build-time tool, run by hand to regenerate _param_table.py from param_info.in; "
        "nothing imports it at run time (test_the_table_generator_is_not_imported checks).",
    ),
}


@dataclass(frozen=True)
class Use:
    """One use of something a core must not touch."""

    file: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.what}"


def _module_forbidden(module: str) -> str | None:
    for banned in FORBIDDEN_MODULES:
        if module == banned or module.startswith(banned + "."):
            return banned
    return None


def _name_forbidden(qualified: str) -> bool:
    if qualified in FORBIDDEN_NAMES:
        return True
    if qualified == "os" or not qualified.startswith("os."):
        return False
    return qualified not in OS_PURE and not any(qualified.startswith(p + ".") for p in OS_PURE - {"os.path"})


class _Scanner(ast.NodeVisitor):
    """Collects the forbidden uses of one module, resolving import aliases."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.names: dict[str, str] = {}  # local name -> qualified name
        self.uses: list[Use] = []

    def _add(self, node: ast.AST, what: str) -> None:
        self.uses.append(Use(self.file, getattr(node, "lineno", 0), what))

    def visit_Import(self, node: ast.Import) -> None:  # noqa: N802 - ast's name
        for alias in node.names:
            banned = _module_forbidden(alias.name)
            if banned is not None:
                self._add(node, f"imports {alias.name}")
            local = alias.asname or alias.name.split(".")[0]
            self.names[local] = alias.name if alias.asname else alias.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:  # noqa: N802 - ast's name
        module = node.module or ""
        if node.level:
            return  # relative imports stay inside the package
        banned = _module_forbidden(module)
        for alias in node.names:
            qualified = f"{module}.{alias.name}"
            if banned is not None or _module_forbidden(qualified) is not None:
                self._add(node, f"imports {qualified}")
            elif _name_forbidden(qualified):
                self._add(node, f"imports {qualified}")
            self.names[alias.asname or alias.name] = qualified

    def _qualified(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in ("open", "print", "input", "breakpoint"):
                return f"builtins.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self._qualified(node.value)
            return None if base is None else f"{base}.{node.attr}"
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:  # noqa: N802 - ast's name
        qualified = self._qualified(node)
        if qualified is not None and _name_forbidden(qualified):
            self._add(node, f"uses {qualified}")
            return  # one report per chain, for its longest forbidden prefix
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:  # noqa: N802 - ast's name
        qualified = self._qualified(node)
        if qualified is not None and qualified.startswith("builtins.") and _name_forbidden(qualified):
            self._add(node, f"uses {qualified[len('builtins.'):]}")

    def visit_Call(self, node: ast.Call) -> None:  # noqa: N802 - ast's name
        qualified = self._qualified(node.func)
        if qualified == "random.Random" and not node.args and not node.keywords:
            self._add(node, "makes an unseeded random.Random()")
        self.generic_visit(node)


def core_files() -> Iterator[tuple[str, Path]]:
    """(core name, source file) for every module of every core that exists."""
    for package in CORE_PACKAGES:
        for path in sorted((SOURCE / package).rglob("*.py")):
            yield package, path
    for module in CORE_MODULES:
        path = SOURCE / module
        if path.exists():
            yield module.removesuffix(".py"), path


def scan(path: Path) -> list[Use]:
    """The forbidden uses in one source file, allow-listed ones left out."""
    relative = path.relative_to(SOURCE).as_posix()
    scanner = _Scanner(relative)
    scanner.visit(ast.parse(path.read_text(encoding="utf-8"), filename=relative))
    allowed, _ = ALLOWED.get(relative, (frozenset(), ""))
    return [use for use in scanner.uses if not _is_allowed(use, allowed)]


def _is_allowed(use: Use, allowed: frozenset[str]) -> bool:
    subject = use.what.split(" ")[-1]
    for entry in allowed:
        if entry.endswith(".*") and (subject == entry[:-2] or subject.startswith(entry[:-1])):
            return True
        if subject == entry or subject.startswith(entry + ".") or subject == entry.removeprefix("builtins."):
            return True
    return False


CORES = sorted({core for core, _ in core_files()})


@pytest.mark.parametrize("core", CORES)
def test_core_reads_no_clock_and_does_no_io(core: str) -> None:
    uses = [use for name, path in core_files() if name == core for use in scan(path)]
    assert not uses, f"{core} touches the world outside its inputs:\n" + "\n".join(map(str, uses))


def test_every_core_package_is_scanned() -> None:
    present = {p.name for p in SOURCE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    drivers = {"runtime", "sim", "cli", "htcondor2"}
    assert present - drivers <= set(CORE_PACKAGES), "a new package: is it a core or a driver?"


def test_allow_list_entries_name_files_that_exist_and_still_need_them() -> None:
    for relative, (allowed, reason) in ALLOWED.items():
        path = SOURCE / relative
        assert path.exists(), relative
        assert reason, relative
        scanner = _Scanner(relative)
        scanner.visit(ast.parse(path.read_text(encoding="utf-8")))
        for entry in allowed:
            assert any(_is_allowed(use, frozenset({entry})) for use in scanner.uses), (
                f"{relative} no longer uses {entry}: take it off the allow-list")


def test_the_table_generator_is_not_imported() -> None:
    for path in sorted(SOURCE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any("gen_param_table" in n for n in names), f"{path} imports the table generator"


# ---------------------------------------------------------------- HTCondor's own package stays optional

REFERENCE_PACKAGES = ("htcondor", "htcondor2", "classad", "classad2", "classad3")
TESTS = Path(__file__).resolve().parent


def _imports_reference(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and not node.level:
        names = [node.module or ""]
    else:
        return False
    return any(n.split(".")[0] in REFERENCE_PACKAGES for n in names)


def _guards_import_error(handler: ast.ExceptHandler) -> bool:
    caught = handler.type
    names = caught.elts if isinstance(caught, ast.Tuple) else [caught]
    return caught is None or any(isinstance(n, ast.Name) and n.id in ("ImportError", "ModuleNotFoundError")
                                 for n in names)


def _unguarded_reference_imports(body: list[ast.stmt], guarded: bool = False) -> Iterator[int]:
    """Lines of module-level imports of the reference that no ``except ImportError`` covers."""
    for node in body:
        if _imports_reference(node) and not guarded:
            yield node.lineno
        elif isinstance(node, ast.Try):
            covered = guarded or any(_guards_import_error(h) for h in node.handlers)
            yield from _unguarded_reference_imports(node.body, covered)
            for part in (node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                yield from _unguarded_reference_imports(part, guarded)
        elif isinstance(node, ast.If):
            yield from _unguarded_reference_imports(node.body, guarded)
            yield from _unguarded_reference_imports(node.orelse, guarded)


def test_htcpool_never_imports_the_htcondor_package() -> None:
    for path in sorted(SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        lines = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt) and _imports_reference(n)]
        assert not lines, f"{path.relative_to(SOURCE)} imports HTCondor's own package at lines {lines}"


def test_tests_import_the_htcondor_package_only_where_they_can_skip_without_it() -> None:
    """A test module imports ``htcondor``/``classad2`` at module level only under ``except
    ImportError`` (or through ``pytest.importorskip``), so the suite collects without it."""
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{path.relative_to(TESTS)}:{line}" for line in _unguarded_reference_imports(tree.body)]
    assert not found, "unguarded imports of HTCondor's package:\n" + "\n".join(found)


# ---------------------------------------------------------------- the scanner itself


def _uses_of(source: str) -> list[str]:
    scanner = _Scanner("example.py")
    scanner.visit(ast.parse(source))
    return [use.what for use in scanner.uses]


@pytest.mark.parametrize(("source", "found"), [
    ("import time\nt = time.time()", ["uses time.time"]),
    ("import time as t\nt.sleep(1)", ["uses time.sleep"]),
    ("from time import monotonic\n", ["imports time.monotonic"]),
    ("from datetime import datetime\nd = datetime.now()", ["uses datetime.datetime.now"]),
    ("import datetime\nd = datetime.date.today()", ["uses datetime.date.today"]),
    ("import asyncio\n", ["imports asyncio"]),
    ("from subprocess import run\n", ["imports subprocess.run"]),
    ("import os\nx = os.environ['HOME']", ["uses os.environ"]),
    ("import os\nx = os.path.exists('/x')", ["uses os.path.exists"]),
    ("with open('f') as f:\n    pass", ["uses open"]),
    ("print('hello')", ["uses print"]),
    ("import random\nx = random.random()", ["uses random.random"]),
    ("import random\nr = random.Random()", ["makes an unseeded random.Random()"]),
    ("from htcpool.clock import wall_clock\n", ["imports htcpool.clock.wall_clock"]),
    ("from htcpool.runtime.http import DaemonClient\n", ["imports htcpool.runtime.http.DaemonClient"]),
])
def test_scanner_finds(source: str, found: list[str]) -> None:
    assert _uses_of(source) == found


@pytest.mark.parametrize("source", [
    "import time\nt = time.gmtime(0)",
    "from datetime import UTC, datetime\nd = datetime.fromtimestamp(0, UTC)",
    "import os\np = os.path.join('a', 'b')",
    "import random\nr = random.Random(7)",
    "import posixpath\np = posixpath.normpath('/a/../b')",
    "def f(fs):\n    return fs.read_text('/x')",
    "def open(x):\n    return x",
])
def test_scanner_lets_pure_code_through(source: str) -> None:
    assert _uses_of(source) == []


@pytest.mark.parametrize(("source", "lines"), [
    ("import classad2\n", [1]),
    ("from htcondor2 import param\n", [1]),
    ("try:\n    import classad2\nexcept ImportError:\n    classad2 = None\n", []),
    ("try:\n    import classad2\nexcept KeyError:\n    pass\n", [2]),
    ("def child():\n    import htcondor2\n", []),
    ("import classad_tools\nfrom htcpool import classad\n", []),
])
def test_reference_import_guard_finds(source: str, lines: list[int]) -> None:
    assert list(_unguarded_reference_imports(ast.parse(source).body)) == lines


# ---------------------------------------------------------------- citations name documents that ship
#
# Docstrings and comments under src/ cite HTCondor's manual by section name, HTCondor's source
# files by name, or htcpool's own docs/*.md; never the project's working material beside the
# repository (the manual chapters kept as "seeds", the reference digests and their numbered
# sections), which a reader of the package does not have.

_CITATION = (
    r"§"
    r"|\bthe seeds?\b|\bseed's\b"
    r"|\bseeds?(?:\s+(?:sections?|documents?|rules?|examples?|files?)\b|\s*\d|\s*[\"“:])"
    r"|(?<!\w)digests?\b"
    r"|\breference\s+\d"
    r"|\.\./shared\b|\bshared/(?:seeds|reference|golden)\b"
    r"|\b[\w-]+\.rst\b"
    r"|\b(?:policy-configuration|user-priorities-and-negotiation|job-scheduling-priorities-deferral"
    r"|whole-machine-slots-howto)\b"
)
_MARKDOWN_NAME = r"(?<![\w/.-])(?:docs/)?([\w-]+\.md)\b"


def _unshipped_citations(line: str, shipped: set[str]) -> list[str]:
    """What ``line`` (of a docstring or comment) cites that htcpool does not ship."""
    import re

    found = [m.group(0) for m in re.finditer(_CITATION, line, re.IGNORECASE)]
    return found + [m.group(0) for m in re.finditer(_MARKDOWN_NAME, line) if m.group(1) not in shipped]


def _prose_lines(source: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of every comment and every string standing alone as a statement
    (module, class and function docstrings, attribute docstrings)."""
    import io
    import tokenize

    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for offset, text in enumerate(node.value.value.splitlines()):
                yield node.lineno + offset, text


def test_docstrings_and_comments_cite_only_documents_that_ship() -> None:
    root = SOURCE.parents[1]
    shipped = {path.name for path in (root / "docs").glob("*.md")} | {"README.md"}
    found = [
        f"{path.relative_to(root).as_posix()}:{number}: {', '.join(what)}"
        for path in sorted(SOURCE.rglob("*.py"))
        for number, text in sorted(_prose_lines(path.read_text(encoding="utf-8")))
        if (what := _unshipped_citations(text, shipped))
    ]
    assert not found, ("cite HTCondor's manual by section name, its source files by name, or docs/*.md "
                       "that exist:\n" + "\n".join(found))


@pytest.mark.parametrize(("line", "found"), [
    ("Rules (seed section 3.6.5; HTCondor 25 ``negotiateWithGroup``):", ["seed section"]),
    ('As in HTCondor (seed "Backfill State"), one client', ['seed "']),
    ("the claimed-idle rule (the seed's rule 2)", ["the seed"]),
    ("the seed's examples", ["the seed"]),
    ("Seed 2.10 (KILLING_TIMEOUT after a hard kill)", ["Seed 2"]),
    ("both are defects (§7.7 of the reference)", ["§"]),
    ("a lease is refused (reference 1.7)", ["reference 1"]),
    ("as the reference digest lists it", ["digest"]),
    ("see schedd-defrag.md and docs/nowhere.md", ["schedd-defrag.md", "docs/nowhere.md"]),
    ("the transitions of policy-configuration.rst", ["policy-configuration.rst"]),
    ("whole-machine-slots-howto.txt", ["whole-machine-slots-howto"]),
    ("read from ../shared/reference/negotiator.md", ["../shared"]),
    ("DESIGN.md's first rule", ["DESIGN.md"]),
    ("the manual's \"Negotiation\"; HTCondor 25 ``Accountant.cpp``; docs/pool.md", []),
    ("exactly the numbers of ``random.Random(seed)``; a store can seed a new queue", []),
    ("compared with ``hmac.compare_digest``; a reference to an attribute", []),
])
def test_citation_scanner_finds(line: str, found: list[str]) -> None:
    assert _unshipped_citations(line, {"pool.md", "README.md"}) == found
