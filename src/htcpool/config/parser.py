"""Statements of a configuration source, applied to a :class:`MacroSet` as they are read.

One logical line (see :mod:`htcpool.config.lines`) is one statement, decided by its
first word and its operator:

* ``NAME = value`` (``NAME : value`` is accepted with a warning) — the name is itself
  macro-expanded, must then consist of letters, digits and ``_ . /``, and references to
  the name inside the value are expanded at once (``START = $(START) && X``);
* ``NAME @=TAG`` … ``@TAG`` — the lines in between, joined by newlines;
* ``use CATEGORY : TEMPLATE[(args)] ...`` — see :mod:`htcpool.config.metaknobs`;
* ``include [ifexist] [command [into FILE]] : PATH`` — another source, read in place;
* ``error [code] : text`` / ``warning : text``;
* ``if`` / ``elif`` / ``else`` / ``endif`` — see :mod:`htcpool.config.conditions`;
* a line starting with ``[`` and without an operator is ignored (.ini section headers).

A leading ``@`` on ``use``/``include``/``error``/``warning`` is ignored, and so is a
leading ``:`` on lines inside an ``if`` body. Every error is raised as a subclass of
:class:`~htcpool.config.errors.ConfigInputError` naming the source and line; reading
stops at the first one. The reader never opens files itself: includes go through the
injected :class:`SourceLoader`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from htcpool.config.conditions import ConditionError, IfStack
from htcpool.config.errors import (
    ConfigIncludeError,
    ConfigInputError,
    ConfigSyntaxError,
)
from htcpool.config.lines import C_SPACE, logical_lines
from htcpool.config.lookup import Context, lookup_raw
from htcpool.config.macro_set import MacroSet
from htcpool.config.macros import Expander, LazyRandom, RandomSource

#: How deep includes and nested ``use`` may go (HTCondor's CONFIG_MAX_NESTING_DEPTH).
MAX_NESTING_DEPTH = 20
ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./")


class SourceLoader(Protocol):
    """What the reader needs from the outside world to follow ``include``."""

    def read_file(self, path: str) -> str:
        """The text of ``path``; raise OSError when it cannot be read."""
        ...

    def run_command(self, command: str) -> str:
        """The standard output of ``command``; raise OSError when it fails."""
        ...


#: ``NAME = `` up to the value, for the common statement form (the first word, which holds
#: no space, ``=`` or ``:``, followed by optional space and ``=``).
_PLAIN_ASSIGNMENT = re.compile(r"([^ \t\n\r\f\v=:]+)[ \t\n\r\f\v]*=[ \t\n\r\f\v]*")
_VALID_NAME = re.compile(r"[A-Za-z0-9_./]+")


def is_valid_name(name: str) -> bool:
    """True when ``name`` is a legal knob name (letters, digits, ``_ . /``)."""
    return _VALID_NAME.fullmatch(name) is not None


@dataclass
class Reader:
    """Reads sources into ``macros`` for one reading context."""

    macros: MacroSet
    context: Context
    environ: Mapping[str, str]
    loader: SourceLoader | None = None
    allow_commands: bool = False
    rng: RandomSource = field(default_factory=LazyRandom)
    cwd: str = ""
    sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: The time ``$INT``/``$EVAL`` … evaluate at while reading (None: no clock).
    clock: Callable[[], float] | None = None
    _expander: Expander | None = field(default=None, repr=False)

    # -- shared helpers -------------------------------------------------------
    def lookup(self, name: str) -> str | None:
        return lookup_raw(self.macros, name, self.context)

    def expander(self, source: str, line: int) -> Expander:
        """The reader's expander, pointed at ``source``:``line`` for error messages."""
        ex = self._expander
        if ex is None:
            ex = self._expander = Expander(self.lookup, self.environ, self.rng, (source, line), self.cwd,
                                           clock=self.clock)
        else:
            ex.where = (source, line)
        return ex

    def self_names(self, name: str) -> tuple[str, ...]:
        """The names a definition of ``name`` counts as a reference to itself."""
        if "." not in name:
            return (name,)
        names = [name]
        for prefix in self.context.prefixes():
            head, dot, rest = name.partition(".")
            if dot and rest and head.upper() == prefix.upper():
                names.append(rest)
                break
        return tuple(names)

    def define(
        self, name: str, raw: str, source: str, line: int, metaknob: str = "", offset: int = 0
    ) -> None:
        value = self.expander(source, line).expand_self(raw, self.self_names(name))
        self.macros.insert(name, value, source, line, metaknob, offset)

    # -- sources --------------------------------------------------------------
    def read_text(self, text: str, source: str, depth: int = 0) -> None:
        """Apply every statement of ``text``, which came from ``source``."""
        ifs = IfStack()
        here_name = ""
        here_tag = ""
        here_lines: list[str] = []
        here_start = 0
        number = 0
        for number, line in logical_lines(text):
            if not line or line.startswith("#"):
                continue
            if here_name:
                if line[0] == "@" and line[1:] == here_tag:
                    self.define(here_name, "\n".join(here_lines), source, number)
                    here_name = ""
                    continue
                here_lines.append(line)
                continue
            if line[0] == ":" and (
                ifs.inside_if() or (line[1:3].lower() == "if" and (len(line) == 3 or line[3] in C_SPACE))
            ):
                line = line[1:]
                if not line:  # a bare ":" leaves nothing to apply
                    continue
            if line[0] in "iIeE":
                ex = self.expander(source, number)
                try:
                    if ifs.handle(line, ex.expand, self.lookup):
                        continue
                except ConditionError as exc:
                    raise ConfigSyntaxError(str(exc), source, number) from None
            if not ifs.enabled():
                continue
            started = self._statement(line, source, number, depth)
            if started is not None:
                here_name, here_tag = started
                here_lines = []
                here_start = number
        if here_name:
            raise ConfigSyntaxError(
                f"found end-of-file while scanning for '@{here_tag}' (value of {here_name} "
                f"started at line {here_start})",
                source,
                number,
            )
        if ifs.inside_if():
            raise ConfigSyntaxError("endif(s) not found before end-of-file", source, number)

    def read_file(self, path: str, depth: int = 0, must_exist: bool = True, line: int = 0,
                  parent: str = "") -> bool:
        """Read the file ``path``; False when it is missing and need not exist."""
        if self.loader is None:
            raise ConfigIncludeError(f"cannot read {path}: no file loader", parent, line)
        try:
            text = self.loader.read_file(path)
        except OSError as exc:
            if not must_exist:
                return False
            raise ConfigIncludeError(
                f"cannot read {path}: {exc.strerror or exc}", parent or path, line
            ) from None
        self.sources.append(path)
        self.read_text(text, path, depth)
        return True

    def read_command(self, command: str, depth: int, line: int, parent: str,
                     must_exist: bool = True) -> None:
        """Run ``command`` and read its output as configuration."""
        if not self.allow_commands:
            raise ConfigIncludeError(
                f"running '{command}' for configuration is not allowed here", parent, line
            )
        if self.loader is None:
            raise ConfigIncludeError(f"cannot run {command}: no loader", parent, line)
        try:
            text = self.loader.run_command(command)
        except OSError as exc:
            if not must_exist:
                return
            raise ConfigIncludeError(f"command '{command}' failed: {exc}", parent, line) from None
        name = f"{command} |"
        self.sources.append(name)
        self.read_text(text, name, depth)

    # -- one statement --------------------------------------------------------
    def _statement(self, line: str, source: str, number: int, depth: int) -> tuple[str, str] | None:
        """Apply one statement; return (name, tag) when it opens an ``@=`` block."""
        plain = _PLAIN_ASSIGNMENT.match(line)
        if plain is not None:
            # NAME = value: the general scan below reaches the same name and value.
            name = plain.group(1)
            if "$" in name:
                name = self.expander(source, number).expand(name)
            if not is_valid_name(name):
                raise ConfigSyntaxError(f"Illegal Identifier: <{name}>", source, number)
            self.define(name, line[plain.end() :], source, number)
            return None
        length = len(line)
        end = 0
        while end < length and line[end] not in C_SPACE and line[end] not in "=:":
            end += 1
        if end >= length:
            if line.startswith("["):
                return None
            raise ConfigSyntaxError(f"syntax error, no operator in: {line}", source, number)
        name = line[:end]
        op = line[end]
        pos = end + 1
        pop = end
        if op not in "=:":
            while pos < length and line[pos] in C_SPACE:
                pos += 1
            while pos < length and line[pos] not in "=:@":
                pos += 1
            pop = pos
            op = line[pos] if pos < length else ""
            if op:
                pos += 1
                if op == "@":
                    if pos < length and line[pos] == "=":
                        pos += 1
                    else:
                        op = ""
        if op not in ("=", ":", "@"):
            raise ConfigSyntaxError(f"syntax error, missing : or = in: {line}", source, number)
        while pos < length and line[pos] in C_SPACE:
            pos += 1
        rhs = line[pos:]
        keyword = name[1:].lower() if name.startswith("@") else name.lower()
        between = line[len(name) : pop].strip(C_SPACE)
        ex = self.expander(source, number)
        if op == ":" and keyword == "use":
            from htcpool.config.metaknobs import apply_use

            category = ex.expand(between)
            if depth + 1 > MAX_NESTING_DEPTH:
                raise ConfigSyntaxError("use statements nested too deep", source, number)
            apply_use(self, category, rhs, source, number, depth + 1)
            return None
        if op == ":" and keyword in ("error", "warning"):
            message = ex.expand(rhs)
            if keyword == "warning":
                self.warnings.append(f'Warning "{source}", Line {number}: {message}')
                return None
            raise ConfigInputError(f"error: {message}", source, number)
        if op == ":" and keyword == "include":
            self._include(between, ex.expand(rhs), source, number, depth)
            return None
        if op == ":":
            if name.lower() != "runbenchmarks":
                self.warnings.append(
                    f'Warning "{source}", Line {number}: obsolete use of \':\' for parameter '
                    f"assignment at {name} : {rhs}"
                )
            op = "="
        name = ex.expand(name)
        if not is_valid_name(name):
            raise ConfigSyntaxError(f"Illegal Identifier: <{name}>", source, number)
        if op == "@":
            return name, rhs
        self.define(name, rhs, source, number)
        return None

    def _include(self, options: str, target: str, source: str, number: int, depth: int) -> None:
        words = options.split()
        must_exist = True
        is_command = False
        into = ""
        if words and words[0] in ("ifexist", "ifexists"):
            must_exist = False
            words = words[1:]
        if words and words[0] in ("command", "output"):
            is_command = True
            words = words[1:]
            if words and words[0] == "into":
                if len(words) < 2:
                    raise ConfigSyntaxError("expected filename after keyword 'into'", source, number)
                into = self.expander(source, number).expand(words[1])
                words = words[2:]
        if words:
            raise ConfigSyntaxError(
                f"unexpected keyword(s) '{options}' after include", source, number
            )
        if depth + 1 >= MAX_NESTING_DEPTH:
            raise ConfigIncludeError("includes nested too deep", source, number)
        target = target.strip(C_SPACE)
        if target.endswith("|"):
            is_command = True
            target = target.rstrip("| ")
        if into:
            if self.loader is not None and self._exists(into):
                self.read_file(into, depth + 1, True, number, source)
                return
            if not self.allow_commands and is_command:
                raise ConfigIncludeError(
                    f"running '{target}' for configuration is not allowed here", source, number
                )
        if is_command:
            self.read_command(target, depth + 1, number, source, must_exist)
        else:
            self.read_file(target, depth + 1, must_exist, number, source)

    def _exists(self, path: str) -> bool:
        assert self.loader is not None
        try:
            self.loader.read_file(path)
        except OSError:
            return False
        return True
