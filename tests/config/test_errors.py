"""Bad configuration: each error names the file and line, and no Config comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from htcpool.config import (
    Config,
    ConfigExpansionError,
    ConfigIncludeError,
    ConfigInputError,
    ConfigMetaknobError,
    ConfigRecursionError,
    ConfigSyntaxError,
    ConfigUsageError,
    ConfigValueError,
    FileLoader,
    read_config,
)
from htcpool.config.metaknobs import template_text

BAD_FILES = [
    # (id, text, error class, line, fragment of the message)
    ("unterminated-here", "A = 1\nB @=end\nx\n", ConfigSyntaxError, 3, "'@end'"),
    ("unknown-template", "use POLICY : NoSuchPolicy\n", ConfigMetaknobError, 1, "does not recognise NoSuchPolicy"),
    ("unknown-category", "use FLAVOUR : Vanilla\n", ConfigMetaknobError, 1, "FLAVOUR"),
    ("if-without-endif", "if true\nA = 1\n", ConfigSyntaxError, 2, "endif(s) not found"),
    ("else-without-if", "else\n", ConfigSyntaxError, 1, "else without matching if"),
    ("endif-without-if", "A=1\nendif\n", ConfigSyntaxError, 2, "endif without matching if"),
    ("else-after-else", "if true\nelse\nelse\nendif\n", ConfigSyntaxError, 3, "else is not allowed after else"),
    ("complex-condition", "A = 2\nif $(A) > 1\nendif\n", ConfigSyntaxError, 2, "complex conditionals are not supported"),
    ("bare-name-condition", "if FOO\nendif\n", ConfigSyntaxError, 1, "not a conditional"),
    ("defined-two-words", "if defined a b\nendif\n", ConfigSyntaxError, 1, "defined argument must be"),
    ("bad-version", "if version >= 5.1\nendif\n", ConfigSyntaxError, 1, "version literal is invalid"),
    ("no-operator", "A = 1\njust words here\n", ConfigSyntaxError, 2, "missing : or ="),
    ("name-only", "LONELY\n", ConfigSyntaxError, 1, "no operator"),
    ("illegal-identifier", "A-B = 1\n", ConfigSyntaxError, 1, "Illegal Identifier: <A-B>"),
    ("error-statement", "X = boom\nerror : stop $(X)\n", ConfigInputError, 2, "stop boom"),
    ("metaknob-needs-argument", "use POLICY : PREEMPT_IF\n", ConfigMetaknobError, 1, "requires an argument"),
    ("missing-include", "include : /no/such/file.conf\n", ConfigIncludeError, 1, "/no/such/file.conf"),
    ("command-not-allowed", "include : echo A=1 |\n", ConfigIncludeError, 1, "not allowed"),
]


@pytest.mark.parametrize(("text", "error", "line", "fragment"), [c[1:] for c in BAD_FILES],
                         ids=[c[0] for c in BAD_FILES])
def test_bad_file(text: str, error: type[Exception], line: int, fragment: str) -> None:
    with pytest.raises(error) as caught:
        Config.from_text(text, source="/etc/condor/bad.conf", loader=FileLoader())
    assert isinstance(caught.value, ConfigInputError)
    assert caught.value.source == "/etc/condor/bad.conf"
    assert caught.value.line == line
    assert fragment in str(caught.value)
    assert str(caught.value).startswith(f'"/etc/condor/bad.conf", line {line}: ')


def test_recursion_is_reported_at_lookup() -> None:
    config = Config.from_text("A = $(B)\nB = x $(C)\nC = $(A)\n", source="loop.conf")
    with pytest.raises(ConfigRecursionError) as caught:
        config.get_str("A")
    assert "A -> B -> C -> A" in str(caught.value)
    assert caught.value.source == "loop.conf" and caught.value.line == 1


def test_recursion_through_a_function_is_reported() -> None:
    config = Config.from_text("A = $INT(B)\nB = $INT(A)\n", source="loop.conf")
    with pytest.raises(ConfigRecursionError):
        config.get_str("A")


def test_bad_function_argument() -> None:
    config = Config.from_text("X = $INT(NOT_A_NUMBER)\n", source="f.conf")
    with pytest.raises(ConfigExpansionError) as caught:
        config.get_str("X")
    assert "does not evaluate to an integer" in str(caught.value)
    assert caught.value.line == 1


def test_value_of_wrong_type_names_its_definition() -> None:
    config = Config.from_text("A = 1\nNEGOTIATOR_INTERVAL = soon\n", source="t.conf")
    with pytest.raises(ConfigValueError) as caught:
        config.get_int("NEGOTIATOR_INTERVAL")
    assert (caught.value.source, caught.value.line) == ("t.conf", 2)


def test_unknown_template_by_name_is_misuse() -> None:
    with pytest.raises(ConfigUsageError):
        template_text("POLICY", "NoSuchPolicy")


def test_includes_and_local_files(tmp_path: Path) -> None:
    (tmp_path / "inc.conf").write_text("B = included\n")
    (tmp_path / "config.d").mkdir()
    (tmp_path / "config.d" / "20-second").write_text("ORDER = $(ORDER) second\n")
    (tmp_path / "config.d" / "10-first").write_text("ORDER = first\n")
    (tmp_path / "config.d" / "skip.rpmsave").write_text("ORDER = skipped\n")
    (tmp_path / "local.conf").write_text("L = local\n")
    root = tmp_path / "condor_config"
    root.write_text(
        f"include : {tmp_path}/inc.conf\n"
        f"include ifexist : {tmp_path}/missing.conf\n"
        f"LOCAL_CONFIG_DIR = {tmp_path}/config.d\n"
        f"LOCAL_CONFIG_FILE = {tmp_path}/local.conf\n"
    )
    config = read_config(str(root), environ={})
    assert config.get_str("B") == "included"
    assert config.get_str("ORDER") == "first second"
    assert config.get_str("L") == "local"
    assert config.get_str("CONFIG_ROOT") == str(tmp_path)
    assert config.sources[0] == str(root)


def test_missing_local_file_is_an_error_unless_not_required(tmp_path: Path) -> None:
    root = tmp_path / "condor_config"
    root.write_text(f"LOCAL_CONFIG_FILE = {tmp_path}/nope.conf\n")
    with pytest.raises(ConfigIncludeError):
        read_config(str(root), environ={})
    root.write_text(f"LOCAL_CONFIG_FILE = {tmp_path}/nope.conf\nREQUIRE_LOCAL_CONFIG_FILE = false\n")
    assert read_config(str(root), environ={}).get_str("LOCAL_CONFIG_FILE") is not None


def test_include_command_only_when_allowed(tmp_path: Path) -> None:
    root = tmp_path / "condor_config"
    root.write_text("include : echo FROM_COMMAND = yes |\n")
    with pytest.raises(ConfigIncludeError):
        read_config(str(root), environ={})
    config = read_config(str(root), environ={}, allow_commands=True)
    assert config.get_str("FROM_COMMAND") == "yes"
