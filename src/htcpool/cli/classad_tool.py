"""``htcpool classad``: evaluate expressions and match ads from the command line.

    htcpool classad eval [--my FILE] [--target FILE] [--time T] [--strict] EXPR...
    htcpool classad match JOB_AD MACHINE_AD...

``eval`` prints each value in canonical ClassAd syntax, one per line;
``time()`` and ``CurrentTime`` read the wall clock unless ``--time`` says
otherwise. ``match``
tells, for each machine ad, whether the job and the machine match each other
and how each ranks the other. Ad files may be in either the old or the new
syntax. Bad input prints where it is and what was expected, and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from htcpool.classad import ClassAd, ClassAdError, ClassAdParseError, EvalContext, ExprTree
from htcpool.classad.context import fixed_clock
from htcpool.classad.forms import parse_one_ad
from htcpool.classad.match import rank, requirements_hold
from htcpool.classad.unparse import unparse
from htcpool.clock import wall_clock


def _read_ad(path: str) -> ClassAd:
    text = Path(path).read_text()
    try:
        return parse_one_ad(text)
    except ClassAdParseError as e:
        raise ClassAdParseError(e.reason, e.text, e.pos, source=path) from None


def _report(e: ClassAdParseError) -> None:
    print(f"htcpool classad: {e}", file=sys.stderr)
    if e.text:
        print(e.excerpt(), file=sys.stderr)


def _context(args: argparse.Namespace) -> EvalContext:
    """The evaluation context of the command: ``--time`` when given, else the wall clock."""
    when = getattr(args, "time", None)
    return EvalContext(clock=wall_clock if when is None else fixed_clock(when), strict=args.strict)


def _eval(args: argparse.Namespace) -> int:
    ctx = _context(args)
    my = _read_ad(args.my) if args.my else None
    target = _read_ad(args.target) if args.target else None
    status = 0
    for text in args.expr:
        try:
            value = ExprTree(text).evaluate(my, target, ctx)
        except ClassAdParseError as e:
            _report(e)
            status = 1
            continue
        print(unparse(value))
    return status


def _match(args: argparse.Namespace) -> int:
    ctx = _context(args)
    job = _read_ad(args.job)
    width = max(len(p) for p in args.machines)
    for path in args.machines:
        machine = _read_ad(path)
        job_ok = requirements_hold(job, machine, ctx)
        machine_ok = requirements_hold(machine, job, ctx)
        verdict = "MATCH" if job_ok and machine_ok else "no match"
        why = []
        if not job_ok:
            why.append("job Requirements false")
        if not machine_ok:
            why.append("machine Requirements false")
        detail = f" ({', '.join(why)})" if why else ""
        print(
            f"{path:<{width}}  {verdict:<8}  job rank {rank(job, machine, ctx):g}"
            f"  machine rank {rank(machine, job, ctx):g}{detail}"
        )
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="htcpool classad", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_eval = sub.add_parser("eval", help="evaluate expressions")
    p_eval.add_argument("--my", help="ad file for MY (unscoped names)")
    p_eval.add_argument("--target", help="ad file for TARGET")
    p_eval.add_argument("--time", type=float, help="the value of time() (seconds since the epoch)")
    p_eval.add_argument("--strict", action="store_true", help="STRICT_CLASSAD_EVALUATION")
    p_eval.add_argument("expr", nargs="+")
    p_match = sub.add_parser("match", help="match a job ad against machine ads")
    p_match.add_argument("--strict", action="store_true", help="STRICT_CLASSAD_EVALUATION")
    p_match.add_argument("job")
    p_match.add_argument("machines", nargs="+")
    args = parser.parse_args(argv)
    try:
        return _eval(args) if args.command == "eval" else _match(args)
    except ClassAdParseError as e:
        _report(e)
        return 1
    except (ClassAdError, OSError) as e:
        print(f"htcpool classad: {e}", file=sys.stderr)
        return 1
