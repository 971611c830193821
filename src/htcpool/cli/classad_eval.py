"""``htcpool classad_eval``: HTCondor's classad_eval tool.

    classad_eval [-quiet] [-file FILE] [-target-file FILE] [AD | ASSIGNMENT | EXPRESSION]...

The arguments are taken in order against one ClassAd, which starts empty (or as the ad in
``-file FILE``, in the old or the new syntax):

* a whole ad (``'[ a = 1; b = "x" ]'``) or several assignments in the old form separated by
  ``;`` (``'a = 1; b = 2'``) is merged into the ad, attribute by attribute;
* an assignment ``NAME = EXPRESSION`` sets one attribute;
* anything else is an expression: it is evaluated in the ad (``MY``), against the ad of
  ``-target-file`` (``TARGET``) when one is given, and its value is printed in the new
  ClassAd syntax, one line (strings quoted, ``undefined``, ``error``, lists ``{ 1,2 }``).

Before the value of an expression, the ad is printed on one line (``[ a = 2; b = 3 ]``) when
it has changed since it was last printed; ``-quiet`` leaves the ad out. An argument that is
none of these is reported with where it fails to parse, and the tool exits 1 after the
others; ``time()`` reads the wall clock, as HTCondor's does.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from htcpool.classad import ClassAd, ClassAdError, ClassAdParseError, EvalContext, ExprTree
from htcpool.classad.forms import parse_one_ad
from htcpool.classad.unparse import unparse
from htcpool.clock import wall_clock

_ASSIGNMENT = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=(?![=?!])\s*(.*)", re.S)


def _read_ad(path: str) -> ClassAd:
    try:
        return parse_one_ad(Path(path).read_text())
    except OSError as e:
        raise ClassAdError(f"cannot read {path}: {e.strerror or e}") from None
    except ClassAdParseError as e:
        raise ClassAdParseError(e.reason, e.text, e.pos, source=path) from None


def apply_argument(ad: ClassAd, text: str) -> ExprTree | None:
    """Merge an ad or assignments of ``text`` into ``ad`` (None), or return it as an expression."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            whole = parse_one_ad(stripped)
        except ClassAdParseError:
            whole = None
        if whole is not None:
            for name in whole:
                ad.insert_node(name, whole.lookup(name).node)
            return None
    found = _ASSIGNMENT.fullmatch(text)
    if found is not None:
        parts = [p for p in re.split(r";\s*(?=[A-Za-z_][A-Za-z0-9_]*\s*=(?![=?!]))", text) if p.strip()]
        pending = []
        for part in parts:
            one = _ASSIGNMENT.fullmatch(part)
            if one is None:
                raise ClassAdParseError(f"not an assignment: {part.strip()!r}", text, 0)
            pending.append((one.group(1), ExprTree(one.group(2).strip().rstrip(";"))))
        for name, expr in pending:
            ad[name] = expr
        return None
    return ExprTree(text)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="classad_eval", description="Evaluate ClassAd expressions.")
    p.add_argument("-quiet", action="store_true", help="print only the values, not the ad")
    p.add_argument("-file", "-my-file", dest="file", metavar="FILE", help="start from the ad in FILE")
    p.add_argument("-target-file", metavar="FILE", help="the TARGET ad")
    p.add_argument("args", nargs="*", metavar="AD|ASSIGNMENT|EXPRESSION")
    args = p.parse_args(argv)
    try:
        ad = _read_ad(args.file) if args.file else ClassAd()
        target = _read_ad(args.target_file) if args.target_file else None
    except ClassAdError as e:
        print(f"classad_eval: {e}", file=sys.stderr)
        return 1
    context = EvalContext(clock=wall_clock)
    printed = None if args.file is None else ""
    status = 0
    for text in args.args:
        try:
            expr = apply_argument(ad, text)
        except ClassAdParseError as e:
            print(f"classad_eval: cannot parse {text!r}: {e}", file=sys.stderr)
            status = 1
            continue
        if expr is None:
            continue
        shown = unparse(ad)
        if not args.quiet and shown != printed:
            print(shown)
            printed = shown
        try:
            value = expr.evaluate(ad, target, context)
        except ClassAdError as e:
            print(f"classad_eval: cannot evaluate {text!r}: {e}", file=sys.stderr)
            status = 1
            continue
        print(unparse(value))
    return status
