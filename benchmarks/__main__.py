"""Run the benchmarks: ``python -m benchmarks [classad] [config] [submit] [schedd_policy] [negotiator] [startd] [usage] [pool] [sim] [bindings] [submit_path] [load] [auth] [http_client]``."""

from __future__ import annotations

import importlib
import sys

BENCHMARKS = {
    "classad": "benchmarks.bench_classad",
    "config": "benchmarks.bench_config",
    "submit": "benchmarks.bench_submit",
    "schedd_policy": "benchmarks.bench_schedd_policy",
    "negotiator": "benchmarks.bench_negotiator",
    "startd": "benchmarks.bench_startd",
    "usage": "benchmarks.bench_usage",
    "defrag": "benchmarks.bench_defrag",
    "pool": "benchmarks.bench_pool",
    "sim": "benchmarks.bench_sim",
    "bindings": "benchmarks.bench_bindings",
    "load": "benchmarks.bench_load",
    "submit_path": "benchmarks.bench_submit_path",
    "auth": "benchmarks.bench_auth",
    "http_client": "benchmarks.bench_http_client",
}


def main(argv: list[str]) -> int:
    names = argv or list(BENCHMARKS)
    for name in names:
        module_name = BENCHMARKS.get(name)
        if module_name is None:
            print(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}", file=sys.stderr)
            return 2
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            print(f"== {name}: not available ({e})")
            continue
        print(f"== {name}")
        module.main()
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
