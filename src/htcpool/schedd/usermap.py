"""HTCondor map files and the provider behind the ClassAd ``userMap()`` function.

A map file line is ``METHOD KEY RESULT``: METHOD is an authentication method
or ``*`` for any; KEY is a literal name (optionally in double quotes) or a
regular expression between slashes (``/^b.*/``, an ``i`` after the closing
slash makes it case-insensitive); RESULT is a name or a comma-separated list,
in which ``\\1``…``\\9`` (or ``\\0``) stand for the regex groups. Blank lines
and ``#`` comments are skipped. The first line whose method and key match
decides. ``UserMaps`` holds named maps (``SCHEDD_CLASSAD_USER_MAP_NAMES``) and
implements ``map_groups(map_set, user)``, where ``map_set`` may be ``NAME`` or
``NAME.METHOD``. A prefix map (``CLASSAD_USER_MAP_PREFIX_<NAME>``) matches
literal keys as prefixes of the input.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from htcpool.schedd.errors import MapFileError


@dataclass(frozen=True)
class MapRule:
    method: str
    key: str
    pattern: re.Pattern[str] | None
    result: str

    def apply(self, method: str, user: str, prefix: bool) -> str | None:
        if self.method != "*" and method != "*" and self.method.lower() != method.lower():
            return None
        if self.pattern is not None:
            match = self.pattern.search(user)
            if match is None:
                return None
            groups = [match.group(0), *[g or "" for g in match.groups()]]
            return re.sub(r"\\(\d)", lambda m: groups[int(m.group(1))]
                          if int(m.group(1)) < len(groups) else "", self.result)
        if user == self.key or (prefix and user.startswith(self.key)):
            return self.result
        return None


def parse_map_file(text: str, source: str = "map") -> list[MapRule]:
    rules: list[MapRule] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        method, _, rest = line.partition(" ")
        rest = rest.strip()
        pattern = None
        if rest.startswith("/"):
            end = rest.find("/", 1)
            while end > 0 and rest[end - 1] == "\\":
                end = rest.find("/", end + 1)
            if end < 0:
                raise MapFileError(f"{source}, line {number}: unterminated regular expression")
            flags = rest[end + 1:].split(None, 1)
            insensitive = bool(flags) and flags[0] == "i" and not rest[end + 1:].startswith(" ")
            key = rest[1:end]
            result = rest[end + 1:].strip()
            if insensitive:
                result = result[1:].strip()
            try:
                pattern = re.compile(key, re.I if insensitive else 0)
            except re.error as e:
                raise MapFileError(f"{source}, line {number}: bad regular expression: {e}") from None
        else:
            try:
                words = shlex.split(rest)
            except ValueError as e:
                raise MapFileError(f"{source}, line {number}: {e}") from None
            if len(words) < 2:
                raise MapFileError(f"{source}, line {number}: expected METHOD KEY RESULT")
            key, result = words[0], " ".join(words[1:])
        if not result:
            raise MapFileError(f"{source}, line {number}: no result")
        rules.append(MapRule(method, key, pattern, result.strip()))
    return rules


@dataclass
class UserMaps:
    """Named map files; the ``user_maps`` provider of an ``EvalContext``."""

    maps: dict[str, list[MapRule]] = field(default_factory=dict)
    prefix: set[str] = field(default_factory=set)

    def add(self, name: str, text: str, prefix: bool = False) -> None:
        self.maps[name.lower()] = parse_map_file(text, name)
        if prefix:
            self.prefix.add(name.lower())

    def map_groups(self, map_set: str, user: str) -> list[str] | None:
        name, _, method = map_set.partition(".")
        rules = self.maps.get(name.lower())
        if rules is None:
            return None
        for rule in rules:
            result = rule.apply(method or "*", user, name.lower() in self.prefix)
            if result is not None:
                return [r.strip() for r in result.split(",") if r.strip()]
        return None
