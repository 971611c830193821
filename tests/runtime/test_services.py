"""The daemon command's table of services (``runtime/services.py``): each name builds its service,
and a daemon process imports its own service only."""

from __future__ import annotations

import subprocess
import sys

import pytest

from htcpool.runtime.daemon import Service
from htcpool.runtime.services import SERVICES, service_for


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_every_daemon_name_gives_its_service_class(name: str) -> None:
    built = service_for(name)
    assert isinstance(built, type)
    assert built.__module__ == SERVICES[name][0]
    assert built.__name__.lower() == f"{name}service"
    assert all(hasattr(built, method) for method in Service.__dict__ if not method.startswith("_"))


def test_the_daemon_command_imports_no_service_until_it_runs_one() -> None:
    modules = [module for module, _ in SERVICES.values()]
    program = ("import sys, htcpool.runtime.services as s; s.service_for('collector'); "
               f"print(sorted(m for m in {modules!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['htcpool.runtime.collector_service']"
