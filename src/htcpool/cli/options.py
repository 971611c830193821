"""The output options condor_q, condor_status and condor_history share, read as HTCondor reads
them (its man pages, "output options").

``take_output_options(argv)`` removes them from the arguments and returns the rest with an
``Output``; the tool's own parser reads the rest. They are taken out first because their
forms are not argparse's: ``-af:jh A B`` (qualifiers after a colon; the attributes run to
the next word starting with ``-``), ``-format FMT ATTR`` given any number of times (``-f``
too, except in condor_history where ``-f`` is ``-file``), ``-attributes A,B`` and
``-wide:N``. ``render`` prints ads in the chosen form: ``-format``, ``-af``, ``-xml``,
``-json``, ``-jsonl`` (one ad a line), ``-long`` (with ``-attributes`` keeping only those attributes), in that order of
precedence; None when none was asked for (the tool prints its table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from htcpool.classad import ClassAd


class OptionError(ValueError):
    """A malformed output option; the message names it."""


@dataclass
class Output:
    af: list[str] | None = None
    af_quals: str = ""
    formats: list[tuple[str, str]] = field(default_factory=list)
    long: bool = False
    json: bool = False
    jsonl: bool = False
    xml: bool = False
    attributes: list[str] | None = None
    wide: int | None = None  # -wide: 0 for no limit, N for -wide:N

    @property
    def chosen(self) -> bool:
        return bool(self.formats or self.af is not None or self.xml or self.json or self.jsonl or self.long)


def _af(word: str) -> str | None:
    """The qualifiers of an ``-af``/``-autoformat`` word ("" for none); None for another word."""
    for name in ("-af", "-autoformat", "-aaf"):
        if word == name:
            return ""
        if word.startswith(name + ":"):
            return word[len(name) + 1:]
    return None


def take_output_options(argv: Sequence[str], *, f_is_format: bool = True) -> tuple[list[str], Output]:
    out = Output()
    rest: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        quals = _af(word)
        if quals is not None:
            j = i + 1
            while j < len(argv) and not argv[j].startswith("-"):
                j += 1
            if j == i + 1:
                raise OptionError(f"{word} needs at least one attribute")
            out.af = (out.af or []) + list(argv[i + 1:j])
            out.af_quals += quals
            i = j
            continue
        if word == "-format" or (word == "-f" and f_is_format):
            if i + 2 >= len(argv):
                raise OptionError(f"{word} needs a format and an attribute")
            out.formats.append((argv[i + 1], argv[i + 2]))
            i += 3
            continue
        if word in ("-attributes", "-attrs"):
            if i + 1 >= len(argv):
                raise OptionError("-attributes needs a list of attributes")
            out.attributes = [a for a in argv[i + 1].replace(" ", ",").split(",") if a]
            i += 2
            continue
        if word == "-wide" or word.startswith("-wide:"):
            text = word.partition(":")[2]
            if text and not text.isdigit():
                raise OptionError(f"{word}: the width must be a number")
            out.wide = int(text) if text else 0
            i += 1
            continue
        flag = {"-long": "long", "-l": "long", "-json": "json", "-jsonl": "jsonl", "-xml": "xml"}.get(word)
        if flag is not None:
            setattr(out, flag, True)
            i += 1
            continue
        rest.append(word)
        i += 1
    return rest, out


def _keep(ads: Sequence[ClassAd], names: Sequence[str] | None) -> list[ClassAd]:
    if names is None:
        return list(ads)
    wanted = {n.lower() for n in names}
    kept = []
    for ad in ads:
        copy = ClassAd()
        for name in ad:
            if name.lower() in wanted:
                copy.insert_node(name, ad.lookup(name).node)
        kept.append(copy)
    return kept


def render(ads: Sequence[ClassAd], out: Output, *, now: float, zone: int = 0,
           ids: Callable[[ClassAd], str] | None = None) -> str | None:
    """The text of the chosen output form for ``ads``; None when the tool's table is wanted."""
    from htcpool.cli.formats.adtext import format_autoformat, format_json, format_long
    from htcpool.cli.formats.printf import format_autoformat_quals, format_printf
    from htcpool.cli.formats.xml import format_xml

    if out.formats:
        return format_printf(ads, out.formats, now=now, zone=zone)
    if out.af is not None:
        if not out.af_quals:
            return format_autoformat(ads, out.af, now=now)
        try:
            return format_autoformat_quals(ads, out.af, out.af_quals, now=now, ids=ids, zone=zone)
        except ValueError as e:
            raise OptionError(str(e)) from None
    kept = _keep(ads, out.attributes)
    if out.xml:
        return format_xml(kept)
    if out.json:
        return format_json(kept)
    if out.jsonl:
        import json

        return "".join(json.dumps(json.loads(format_json([ad]))[0]) + "\n" for ad in kept)
    if out.long:
        return format_long(kept)
    return None
