"""htcpool token_create and token_list as a user runs them (in process, no daemons)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from htcpool.cli.token import create, list_tokens
from htcpool.runtime.layout import PoolLayout
from htcpool.runtime.pool import write_personal_config


@pytest.fixture
def pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PoolLayout:
    layout = PoolLayout(tmp_path / "pool")
    layout.make()
    write_personal_config(layout)
    with layout.config.open("a") as f:
        f.write("TRUST_DOMAIN = cm.example.org\n")
    layout.ensure_token()
    monkeypatch.delenv("CONDOR_CONFIG", raising=False)
    monkeypatch.setenv("HTCPOOL_LOCAL_DIR", str(layout.root))
    monkeypatch.setenv("_CONDOR_SEC_TOKEN_DIRECTORY", str(tmp_path / "tokens.d"))
    return layout


def test_create_then_list(pool: PoolLayout, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert create(["-identity", "alice@example.org", "-authz", "read", "-lifetime", "600", "-token", "alice"]) == 0
    written = tmp_path / "tokens.d" / "alice"
    assert os.stat(written).st_mode & 0o777 == 0o600
    assert create(["-identity", "bob@example.org"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed.count(".") == 2  # header.claims.signature
    (tmp_path / "tokens.d" / "bob").write_text(printed + "\nnot-a-token\n")
    assert list_tokens([]) == 1  # the line that is not a token is reported
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) == 2 and lines[0].startswith('Header: {"alg":"HS256","kid":"POOL"')
    claims = json.loads(lines[0].split(" Payload: ")[1].split(" File: ")[0].replace("\\/", "/"))
    assert claims["sub"] == "alice@example.org" and claims["iss"] == "cm.example.org"
    assert claims["scope"] == "condor:/READ" and claims["exp"] - claims["iat"] == 600
    assert lines[0].endswith(f"File: {written}") and "malformed" in err


@pytest.mark.parametrize("argv, message", [
    (["-identity", "alice"], "must be user@domain"),
    (["-identity", "a@b", "-authz", "EVERYTHING"], "-authz EVERYTHING: not an authorization level"),
    (["-identity", "a@b", "-key", "nokey"], "the signing key 'nokey' cannot be used: there is no signing key"),
    (["-identity", "a@b", "-token", "../escape"], "a file name without a directory"),
    (["-identity", "a@b", "-lifetime", "0"], "must be a positive number"),
])
def test_bad_requests_are_refused_naming_why(pool: PoolLayout, argv: list[str], message: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert create(argv) == 1
    assert message in capsys.readouterr().err
