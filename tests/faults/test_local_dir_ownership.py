"""``htcpool up`` refuses a local directory, or secrets in it, that another user controls (19.5).

The attack: as root, ``up`` accepted a local directory (and a ``pool.token``) planted by another
user, who could then change the configuration or the keys and have their job run as root. Now
every such directory is refused with the path and the reason before anything is written there.
The checks take the uid of "the user running the pool" as an argument, so most of them run as
any user; the end-to-end refusal of ``htcpool up`` needs root (to plant files owned by another).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.security import ownership

ME = os.geteuid()
OTHER = 54321 if ME != 54321 else 54322
needs_root = pytest.mark.skipif(ME != 0, reason="planting files owned by another user needs root")


def safe_dir(tmp_path: Path) -> Path:
    """A directory whose parents are all safe for this user (pytest's own are)."""
    assert not ownership.parent_problems(tmp_path / "x", ME), ownership.parent_problems(tmp_path / "x", ME)
    return tmp_path


def test_a_fresh_directory_is_trusted(tmp_path: Path) -> None:
    layout = PoolLayout(safe_dir(tmp_path) / "pool")
    assert ownership.problems(layout, ME) == []
    layout.make()
    layout.ensure_token()
    assert ownership.problems(layout, ME) == []


def test_directory_of_another_user_is_refused(tmp_path: Path) -> None:
    layout = PoolLayout(safe_dir(tmp_path) / "pool")
    layout.make()
    found = ownership.problems(layout, OTHER)
    assert any(f"{layout.root} (the local directory) belongs to uid {ME}" in p for p in found), found


def test_non_sticky_writable_parent_is_refused_sticky_is_not(tmp_path: Path) -> None:
    open_dir = safe_dir(tmp_path) / "open"
    open_dir.mkdir()
    os.chmod(open_dir, 0o777)
    found = ownership.problems(PoolLayout(open_dir / "pool"), ME)
    assert any(str(open_dir) in p and "without the sticky bit" in p for p in found), found
    os.chmod(open_dir, 0o1777)
    assert ownership.problems(PoolLayout(open_dir / "pool"), ME) == []
    os.chmod(open_dir, 0o775)
    found = ownership.problems(PoolLayout(open_dir / "pool"), ME)
    assert any("mode 0775" in p for p in found), found


def test_writable_token_and_key_are_refused(tmp_path: Path) -> None:
    layout = PoolLayout(safe_dir(tmp_path) / "pool")
    layout.make()
    layout.ensure_token()
    os.chmod(layout.token_file, 0o620)
    key = layout.root / "passwords.d" / "POOL"
    os.chmod(key, 0o602)
    found = ownership.problems(layout, ME)
    assert any(str(layout.token_file) in p and "writable by its group" in p for p in found), found
    assert any(str(key) in p and "writable by everyone" in p for p in found), found


def test_writable_configuration_is_refused_first(tmp_path: Path) -> None:
    layout = PoolLayout(safe_dir(tmp_path) / "pool")
    layout.make()
    layout.config.write_text("SEC_PASSWORD_DIRECTORY = /elsewhere\n")
    os.chmod(layout.config, 0o666)
    found = ownership.problems(layout, ME)
    assert found == [f"{layout.config} (the configuration) is writable by everyone (mode 0666); "
                     "it must be writable by its owner only"]


@needs_root
def test_planted_secrets_of_another_user_are_refused(tmp_path: Path) -> None:
    layout = PoolLayout(safe_dir(tmp_path) / "pool")
    layout.make()
    layout.ensure_token()
    os.chown(layout.token_file, OTHER, OTHER)
    os.chown(layout.root / "passwords.d" / "POOL", OTHER, OTHER)
    found = ownership.problems(layout, ME)
    assert any(str(layout.token_file) in p and f"belongs to uid {OTHER}" in p for p in found), found
    assert any(f"{layout.root / 'passwords.d' / 'POOL'} (a signing key) belongs to uid {OTHER}" in p
               for p in found), found


@needs_root
def test_up_refuses_a_planted_directory(tmp_path: Path) -> None:
    """The reproduction: another user's directory with their own token in it; ``up`` as root
    used to adopt both."""
    planted = safe_dir(tmp_path) / "planted"
    planted.mkdir()
    (planted / "pool.token").write_text("eyJ...\n")
    for path in (planted, planted / "pool.token"):
        os.chown(path, OTHER, OTHER)
    env = dict(os.environ, HTCPOOL_LOCAL_DIR=str(planted))
    env.pop("CONDOR_CONFIG", None)
    done = subprocess.run([sys.executable, "-c", "import sys; from htcpool.cli import main; sys.exit(main())",
                           "up", "--local-dir", str(planted)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0, done
    assert f"{planted} (the local directory) belongs to uid {OTHER}" in done.stderr, done.stderr
    assert not (planted / "run").exists()  # nothing was made there
    assert not (planted / "condor_config").exists()
