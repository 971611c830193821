"""Build-time generator of :mod:`htcpool.config._param_table` from HTCondor's ``param_info.in``.

``param_info.in`` is a sequence of sections. A section starts with ``[NAME]`` and holds
``key=value`` lines, or ``key : @TAG`` followed by raw lines up to a line that is exactly
``@TAG``. Lines starting with ``#`` outside a multi-line value are comments. Sections whose
name starts with ``$`` are metaknob templates, ``[$CATEGORY.TEMPLATE]``; their ``default`` is
the configuration text that ``use CATEGORY : TEMPLATE`` inserts.

This module is a tool, not part of the runtime: it reads the source file given on the command
line and writes the Python table next to itself. Run it when ``param_info.in`` changes::

    python -m htcpool.config.gen_param_table /path/to/param_info.in

The generated module is committed, so the package never reads ``param_info.in`` at runtime.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

#: ``type=`` spellings in param_info.in mapped to the five types htcpool knows.
TYPE_NAMES = {
    "string": "string",
    "path": "string",
    "int": "int",
    "long": "int",
    "bool": "bool",
    "double": "double",
}


@dataclass
class Section:
    """One ``[NAME]`` section with its properties in file order."""

    name: str
    properties: dict[str, str] = field(default_factory=dict)


def parse_param_info(text: str) -> list[Section]:
    """Split ``param_info.in`` text into sections; raise ValueError on malformed lines."""
    sections: list[Section] = []
    current: Section | None = None
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            current = Section(stripped[1:-1])
            sections.append(current)
            continue
        if current is None:
            raise ValueError(f"line {index}: property outside a section: {line!r}")
        equals = stripped.find("=")
        colon = stripped.find(":")
        if colon >= 0 and (equals < 0 or colon < equals) and "@" in stripped[colon:]:
            key = stripped[:colon].strip()
            tag = stripped[colon + 1 :].strip()
            if not tag.startswith("@"):
                raise ValueError(f"line {index}: expected @TAG after ':': {line!r}")
            body: list[str] = []
            while index < len(lines) and lines[index].rstrip("\r") != tag:
                body.append(lines[index].rstrip("\r"))
                index += 1
            if index >= len(lines):
                raise ValueError(f"section {current.name}: {tag} never closes {key}")
            index += 1
            current.properties[key] = "\n".join(body)
            continue
        if equals < 0:
            raise ValueError(f"line {index}: expected key=value: {line!r}")
        key = stripped[:equals].strip()
        value = line.lstrip()[len(stripped[:equals]) + 1 :].lstrip(" ").rstrip("\r")
        current.properties[key] = value
    return sections


Bound = int | float | None


def parse_range(text: str, kind: str, name: str) -> tuple[Bound, Bound]:
    """``range=LOW,HIGH`` of a numeric knob; an empty side is open (None)."""
    low, comma, high = text.partition(",")
    if not comma:
        raise ValueError(f"[{name}] range {text!r} is not LOW,HIGH")
    number = int if kind == "int" else float

    def bound(side: str) -> Bound:
        side = side.strip()
        return number(side) if side else None

    return bound(low), bound(high)


def render_table(sections: list[Section], source_name: str) -> str:
    """The text of the generated Python module."""
    params: list[tuple[str, str, str]] = []
    ranges: list[tuple[str, tuple[Bound, Bound]]] = []
    metaknobs: dict[str, list[tuple[str, str]]] = {}
    for section in sections:
        default = section.properties.get("default", "")
        if section.name.startswith("$"):
            category, _, template = section.name[1:].partition(".")
            metaknobs.setdefault(category.upper(), []).append((template, default))
            continue
        kind = TYPE_NAMES.get(section.properties.get("type", "string").strip().lower())
        if kind is None:
            raise ValueError(f"[{section.name}] has unknown type {section.properties['type']!r}")
        params.append((section.name, default, kind))
        if "range" in section.properties and kind in ("int", "double"):
            ranges.append((section.name, parse_range(section.properties["range"], kind, section.name)))
    out = [
        f'"""HTCondor\'s parameter table and metaknob templates, generated from {source_name}.',
        "",
        "Do not edit: regenerate with ``python -m htcpool.config.gen_param_table``.",
        "PARAMS maps each knob name (as spelled in the table) to (raw default, type); type is",
        "one of string, int, bool, double. RANGES maps the numeric knobs that have one to their",
        "(lowest, highest) allowed value, None for an open side. METAKNOBS maps CATEGORY to",
        "TEMPLATE to its text.",
        '"""',
        "",
        "PARAMS: dict[str, tuple[str, str]] = {",
    ]
    for name, default, kind in params:
        out.append(f"    {name!r}: ({default!r}, {kind!r}),")
    out.append("}")
    out.append("")
    out.append("RANGES: dict[str, tuple[int | float | None, int | float | None]] = {")
    for name, (low, high) in ranges:
        out.append(f"    {name!r}: ({low!r}, {high!r}),")
    out.append("}")
    out.append("")
    out.append("METAKNOBS: dict[str, dict[str, str]] = {")
    for category, templates in metaknobs.items():
        out.append(f"    {category!r}: {{")
        for template, text in templates:
            out.append(f"        {template!r}: {text!r},")
        out.append("    },")
    out.append("}")
    out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Regenerate ``_param_table.py`` from the param_info.in named in ``argv``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m htcpool.config.gen_param_table PARAM_INFO_IN", file=sys.stderr)
        return 2
    source = Path(args[0])
    sections = parse_param_info(source.read_text(encoding="utf-8"))
    target = Path(__file__).with_name("_param_table.py")
    target.write_text(render_table(sections, source.name), encoding="utf-8")
    print(f"wrote {target} ({len(sections)} sections)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
