"""Text reports about a configuration, in ``condor_config_val``'s formats.

Pure functions from a :class:`~htcpool.config.Config` to lines of text: a verbose
query, ``-dump``, ``-summary``, ``-config`` and ``use CATEGORY[:TEMPLATE]``. The command
line tool (:mod:`htcpool.cli.config_val`) only parses options and prints these.
"""

from __future__ import annotations

import re

from htcpool.config.config import Config
from htcpool.config.lookup import Found
from htcpool.config.macro_set import DETECTED, ENVIRONMENT, Definition
from htcpool.config.table import all_params, metaknob, metaknob_templates

HERE_INDENT = "   "


def print_value(value: str, indent: str = HERE_INDENT) -> str:
    """``= value``, or an ``@=end`` block when the value spans lines."""
    if "\n" in value:
        body = "\n".join(indent + line for line in value.split("\n"))
        return f"@=end\n{body}\n@end"
    return f"= {value}"


def location(definition: Definition | None) -> str:
    """HTCondor's ``# at:`` text for a definition (None: the parameter table)."""
    if definition is None:
        return "<Default>"
    return definition.location()


def verbose_query(config: Config, name: str, subsystem: str | None = None,
                  local_name: str | None = None) -> list[str] | None:
    """The ``-verbose NAME`` block, or None when the name is not defined."""
    found = config.lookup(name, subsystem, None, local_name)
    if found is None:
        return None
    used = found.definition.name if found.definition is not None else (found.table_name or name)
    value = config.get_str(used, subsystem, None, local_name) or ""
    raw_line = f"{used} = {found.raw}"
    lines = [f"{used} {print_value(value)}", f" # at: {location(found.definition)}"]
    if "\n" in raw_line:
        head, _, rest = raw_line.partition("\n")
        raw_line = head + "\n" + "\n".join(" #   " + part for part in rest.split("\n"))
    lines.append(f" # raw: {raw_line}")
    lines.append("")
    return lines


def matching_names(config: Config, pattern: str) -> list[str]:
    """Names (defined or in the table) matching ``pattern`` (a regex, any case), sorted."""
    regex = re.compile(pattern, re.IGNORECASE)
    names: dict[str, str] = {}
    for info in all_params():
        if "." not in info.name and regex.search(info.name):
            names.setdefault(info.name.upper(), info.name)
    for definition in config.definitions():
        if regex.search(definition.name):
            names[definition.name.upper()] = definition.name
    return [names[key] for key in sorted(names, key=str.lower)]


def dump(config: Config, patterns: list[str], expand: bool, verbose: bool) -> list[str]:
    """``-dump [pattern...]``."""
    host = config.get_str("FULL_HOSTNAME") or "<unknown hostname>"
    lines = [f"# Configuration from machine: {host}"]
    for pattern in patterns or [""]:
        if pattern:
            lines.append("")
            lines.append(f"# Parameters with names that match {pattern}:")
        for name in matching_names(config, pattern):
            found = config.lookup(name)
            if found is None:
                # Table entries without a default still show, with an empty value.
                found = Found("", None, name)
            value = (config.get_str(name) or "") if expand else found.raw
            lines.append(f"{name} {print_value(value)}")
            if verbose:
                lines.append(f" # at: {location(found.definition)}")
                other = found.raw if expand else (config.get_str(name) or "")
                lines.append(f" # {'raw' if expand else 'expanded'}: {other}")
    if not verbose:
        lines.append("# Contributing configuration file(s):")
        lines.extend(f"#\t{source}" for source in config.sources)
    return lines


def summary(config: Config, version_line: str, detected: bool = False) -> list[str]:
    """``-summary``: values that differ from the defaults, grouped by the file that set them."""
    lines = [f"# condor_config_val {version_line}", ""]
    by_source: dict[str, list[Definition]] = {}
    for definition in config.definitions():
        if definition.source == DETECTED and not detected:
            continue
        by_source.setdefault(definition.source, []).append(definition)
    order = {source: index for index, source in enumerate([*config.sources, ENVIRONMENT])}
    for source in sorted(by_source, key=lambda s: order.get(s, -1)):
        lines.extend(["#", f"# from {source}", "#"])
        for definition in sorted(by_source[source], key=lambda d: (d.line, d.name.lower())):
            lines.append(f"{definition.name} {print_value(definition.raw)}")
    return lines


def config_sources(config: Config) -> list[str]:
    """``-config``: the root source and any local ones."""
    if not config.sources:
        return ["Configuration source:", "\t(none)"]
    lines = ["Configuration source:", f"\t{config.sources[0]}"]
    if len(config.sources) > 1:
        lines.append("Local configuration sources:")
        lines.extend(f"\t{source}" for source in config.sources[1:])
    return lines


def describe_use(spec: str) -> tuple[list[str], bool]:
    """``use CATEGORY[:TEMPLATE]``: (lines, found)."""
    category, _, template = spec.partition(":")
    templates = metaknob_templates(category.strip())
    if templates is None:
        return [f"use {category.strip()} is not a known category"], False
    if not template:
        return [f"use {category.upper()} accepts", *("  " + t for t in sorted(templates, key=str.lower))], True
    found = metaknob(category.strip(), template.strip())
    if found is None:
        return [f"use {category.upper()}:{template} is not a known template"], False
    spelled_category, spelled_template, text = found
    return [f"use {spelled_category}:{spelled_template} is", text], True
