"""Physical lines to logical lines, the way HTCondor's configuration reader sees them.

Each physical line is stripped of leading and trailing whitespace. A line that ends
in a backslash continues onto the next one (the backslash is dropped and the next
line's text is appended directly). Quirks kept from HTCondor:

* a line that *starts* a statement with ``#`` is a comment, and a backslash at its end
  does not continue it;
* a comment line met *inside* a continuation keeps only its last character, so
  ``# note \\`` keeps the continuation going while ``# note`` leaves a stray ``e``;
* the line number of a logical line is that of its last physical line.

:func:`logical_lines` yields ``(line_number, text)``; comments and blank lines come
through too (the parser skips them) so ``@=`` blocks see the same stream.

condor_submit reads its descriptions with the same code and two options, which
:mod:`htcpool.submit.source` asks for: ``first_number`` numbers a continued line by its
first physical line (submit errors name where the statement starts), and
``skip_comments_in_continuation`` drops a comment line met inside a continuation
entirely, so a continued value may have lines commented out.
"""

from __future__ import annotations

from collections.abc import Iterator

#: C's isspace() set, which HTCondor trims with.
C_SPACE = " \t\n\r\f\v"


def logical_lines(
    text: str, *, first_number: bool = False, skip_comments_in_continuation: bool = False
) -> Iterator[tuple[int, str]]:
    """Yield (line number, logical line) pairs of configuration ``text``.

    The number is the last physical line's, or the first's with ``first_number``.
    """
    physical = text.split("\n")
    if physical and physical[-1] == "":
        physical.pop()
    buffer = ""
    continuing = False
    first = 0
    for number, raw in enumerate(physical, start=1):
        line = raw.strip(C_SPACE)
        in_comment = line.startswith("#")
        if in_comment and continuing:
            if skip_comments_in_continuation:
                continue
            line = line[-1:]
            in_comment = False
        if not continuing:
            first = number
        buffer += line
        if buffer.endswith("\\") and not (in_comment and not continuing):
            buffer = buffer[:-1]
            continuing = True
            continue
        yield (first if first_number else number), buffer
        buffer = ""
        continuing = False
    if continuing:
        yield (first if first_number else len(physical)), buffer


def split_template_lines(text: str) -> list[str]:
    """Lines of a metaknob template: split on newlines, trimmed, empty ones dropped."""
    out = []
    for raw in text.split("\n"):
        line = raw.strip(C_SPACE)
        if line:
            out.append(line)
    return out
