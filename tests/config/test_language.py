"""The configuration language, case by case: input text, a name, the expanded value.

Expected values were checked against HTCondor 25's reader (``htcondor2``); quirks are
named in the case ids. Lookups are as the TOOL subsystem unless a case says otherwise.
"""

from __future__ import annotations

import random

import pytest

from htcpool.config import Config, fake_machine

CASES: list[tuple[str, str, str, str | None]] = [
    # (id, config text, name, expected expanded value or None for undefined)
    ("plain", "A = xxx\nC = $(A)\n", "C", "xxx"),
    ("late-binding", "A = xxx\nC = $(A)\nA = yyy\n", "C", "yyy"),
    ("self-reference", "A = xxx\nB = $(A)\nA = $(A)yyy\nA = $(A)zzz\n", "B", "xxxyyyzzz"),
    ("self-ref-default", "START = $(START) && X\n", "START", "True && X"),
    ("names-any-case", "Foo = 1\nBAR = $(foo)2\n", "bar", "12"),
    ("undefined-is-empty", "MAX = $(NUMCPUS)-1\n", "MAX", "-1"),
    ("colon-default", "MAX = $(NUMCPUS:4)-1\n", "MAX", "4-1"),
    ("default-when-empty", "E =\nD = $(E:dflt)\n", "D", "dflt"),
    ("default-is-expanded", "B = bb\nZ = $(Y:$(B)x)\n", "Z", "bbx"),
    ("empty-is-undefined", "E =\n", "E", None),
    ("nested-reference", "Y = B\nB = bb\nX = $($(Y))\n", "X", "bb"),
    ("continuation", "A = a \\\n  b\n", "A", "a b"),
    ("comment-continues", "B=bb\nD=dd\nA = $(B) \\\n# $(C) \\\n$(D)\n", "A", "bb dd"),
    ("comment-last-char-quirk", "A3 = x \\\n  # comment\n", "A3", "x t"),
    ("here-block", "S @=end\n  one\n  # not kept\n  two\n@end\n", "S", "one\ntwo"),
    ("dollar-dollar-kept", "D = $$(Foo) $$([1+2])\n", "D", "$$(Foo) $$([1+2])"),
    ("dollar-macro", "B = bb\nD = $(DOLLAR)(B)\n", "D", "$(B)"),
    ("ini-header-ignored", "[Section]\nA = 1\n", "A", "1"),
    ("colon-assignment", "COL : value\n", "COL", "value"),
    ("int", "X = 2\nY = 6\nXY = $(X) * $(Y)\nI = $INT(XY)\n", "I", "12"),
    ("int-format", "XY = 2 * 6\nI = $INT(XY,%04d)\n", "I", "0012"),
    ("int-text-format", "XY = 2 * 6\nI = $INT(XY,Area=%d)\n", "I", "Area=12"),
    ("int-truncates", "I = $INT(3.7)\n", "I", "3"),
    ("real-default-format", "XY = 2 * 6\nR = $REAL(XY)\n", "R", "12"),
    ("real-format", "XY = 2 * 6\nR = $REAL(XY,%.2f)\n", "R", "12.00"),
    ("string", "N = \"7\"\nS = $STRING(N)\n", "S", "7"),
    ("eval", "N2 = 2*3\nE = $EVAL(N2)\n", "E", "6"),
    ("substr", "Name = abcdef\nS = $SUBSTR(Name, 2)\n", "S", "cdef"),
    ("substr-negative-length", "Name = abcdef\nS = $SUBSTR(Name, 0, -2)\n", "S", "abcd"),
    ("substr-range", "Name = abcdef\nS = $SUBSTR(Name, 1, 3)\n", "S", "bcd"),
    ("substr-from-end", "Name = abcdef\nS = $SUBSTR(Name, -1)\n", "S", "f"),
    ("substr-empty", "Name = abcdef\nS = $SUBSTR(Name, 4, -3)\n", "S", None),
    ("choice-items", "C = $CHOICE(1, a, b, c)\n", "C", "b"),
    ("choice-list", "N0 = 2\nL = x, y, z\nC = $CHOICE(N0, L)\n", "C", "z"),
    ("file-parts",
     "P = $Fp(/a/b/c.txt) $Fn(/a/b/c.txt) $Fx(/a/b/c.txt) $Fnx(/a/b/c.txt) $Fd(/a/b/c.txt)"
     " $Fdb(/a/b/c.txt) $Fq(/a/b/c.txt) $Fxb(c.tar.gz) $BASENAME(/a/b.c) $DIRNAME(/a/b.c)\n",
     "P", '/a/b/ c .txt c.txt b/ b "/a/b/c.txt" gz b.c /a/'),
    ("env", "H = $ENV(HOME)\n", "H", "/home/test"),
    ("env-missing", "H = $ENV(NOPE)\n", "H", "UNDEFINED"),
    ("env-default", "H = $ENV(NOPE:fallback)\n", "H", "fallback"),
    ("if-defined", "B = 1\nIF1 = a\nif defined B\n IF1 = b\nendif\n", "IF1", "b"),
    ("if-not-defined", "if ! defined NOPE\nX = yes\nelse\nX = no\nendif\n", "X", "yes"),
    ("if-version", "if version >= 8.0\nV = new\nelse\nV = old\nendif\n", "V", "new"),
    ("if-version-less", "if version < 8.1.6\nV = old\nelse\nV = new\nendif\n", "V", "new"),
    ("if-macro", "N0 = 2\nif $(N0)\nM = yes\nendif\n", "M", "yes"),
    ("if-empty-macro-false", "if $(NOPE)\nM = yes\nelse\nM = no\nendif\n", "M", "no"),
    ("elif", "if false\nE = 1\nelif true\nE = 2\nelse\nE = 3\nendif\n", "E", "2"),
    ("elif-after-taken", "if true\nE = 1\nelif true\nE = 2\nendif\n", "E", "1"),
    ("nested-if-disabled",
     "if false\nif true\nN = 1\nendif\nelse\nN = 2\nendif\n", "N", "2"),
    ("crufty-bools", "if yes\nC = y\nendif\nif no\nC = n\nendif\n", "C", "y"),
    ("defined-use", "if defined use POLICY:Desktop\nD = 1\nendif\n", "D", "1"),
    ("colon-inside-if", "if true\n:X = 5\nendif\n", "X", "5"),
    ("name-is-expanded", "N = 3\nSLOT_TYPE_$(N) = cpus=1\n", "SLOT_TYPE_3", "cpus=1"),
    ("subsystem-prefix-applies", "TOOL.A = t\nA = plain\n", "A", "t"),
    ("prefix-inside-reference", "TOOL.A = t\nA = plain\nB = $(A)\n", "B", "t"),
    ("other-subsystem-ignored", "STARTD.A = s\nA = plain\n", "A", "plain"),
    ("metaknob", "use ROLE : Personal\n", "DAEMON_LIST", "MASTER COLLECTOR NEGOTIATOR STARTD SCHEDD"),
    ("metaknob-args", "use FEATURE : StaticSlots(2, 3)\n", "NUM_SLOTS_TYPE_2", "3"),
    ("metaknob-default-arg", "use FEATURE : PartitionableSlot\n", "SLOT_TYPE_1", "100%"),
    ("metaknob-list", "use ROLE : Execute, Submit\n", "DAEMON_LIST", "MASTER STARTD SCHEDD"),
    ("metaknob-self-ref",
     "use POLICY : PREEMPT_IF_RUNTIME_EXCEEDS(100)\n", "PREEMPT",
     '(JobState == "Running") && ((time() - JobCurrentStartDate) > 100) || False'),
    ("metaknob-meta-args-not-in-plain-config", "MM=$(1) $(1?) $(0#)\n", "MM", " $(1?) $(0#)"),
    ("desktop-latch", "use POLICY : Desktop\n", "STARTD_LATCH_EXPRS", " CpuBusy"),
]


def _config(text: str, **kwargs: object) -> Config:
    return Config.from_text(
        text, environ={"HOME": "/home/test"}, facts=fake_machine(), **kwargs  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(("text", "name", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_expansion(text: str, name: str, expected: str | None) -> None:
    assert _config(text).get_str(name) == expected


def test_subsystem_argument_selects_prefix() -> None:
    config = _config("NEGOTIATOR.MAX_TIME = 30\nSTARTD.X = s\nX = plain\nY = $(X)\n")
    assert config.get_str("MAX_TIME") is None
    assert config.get_str("MAX_TIME", subsystem="NEGOTIATOR") == "30"
    assert config.get_str("Y", subsystem="STARTD") == "s"
    assert config.get_str("Y") == "plain"


def test_local_name_comes_before_subsystem() -> None:
    text = "SCHEDD.XYZZY.SCHEDD_NAME = nope\nXYZZY.SCHEDD_NAME = local\nSCHEDD.SCHEDD_NAME = sub\n"
    config = _config(text)
    assert config.get_str("SCHEDD_NAME", subsystem="SCHEDD", local_name="XYZZY") == "local"
    assert config.get_str("SCHEDD_NAME", subsystem="SCHEDD") == "sub"


def test_slot_lookup_prefers_slot_name() -> None:
    config = _config("SLOT2_EXECUTE = /scratch/two\nEXECUTE = /scratch\n")
    assert config.get_str("EXECUTE", slot=2) == "/scratch/two"
    assert config.get_str("EXECUTE", slot=1) == "/scratch"


def test_typed_accessors() -> None:
    config = _config("I = 2*3\nR = 3/2\nB = 2 > 1\nT = TRUE\nF = 0\nBIG = 1e3\n")
    assert config.get_int("I") == 6
    assert config.get_float("R") == 1.0
    assert config.get_bool("B") is True
    assert config.get_bool("T") is True
    assert config.get_bool("F") is False
    assert config.get_int("BIG") == 1000
    assert config.get_int("NEGOTIATOR_INTERVAL") == 60  # table default
    assert config.get_int("NOPE", default=7) == 7
    assert config.get_expr("START") == "True"


def test_empty_typed_value_falls_back_to_table_default() -> None:
    config = _config("use POLICY : Desktop\n")
    assert config.get_str("CLAIM_WORKLIFE") is None
    assert config.get_int("CLAIM_WORKLIFE") == 1200


def test_provenance() -> None:
    config = _config("MINUTE = 60\nA = 1\nuse ROLE : Execute\n", source="/etc/condor/condor_config")
    assert str(config.provenance("A")) == "/etc/condor/condor_config, line 2"
    assert config.provenance("MINUTE") is not None and config.provenance("MINUTE").is_default
    daemon_list = config.provenance("DAEMON_LIST")
    assert daemon_list is not None and daemon_list.metaknob == "ROLE:Execute"
    assert config.provenance("NO_SUCH_THING") is None


def test_random_functions_use_the_injected_generator() -> None:
    text = "R = $RANDOM_INTEGER(0, 8, 2)\nC = $RANDOM_CHOICE(a, b, c)\n"
    first = _config(text, rng=random.Random(42))
    again = _config(text, rng=random.Random(42))
    values = [first.get_str("R") for _ in range(20)]
    assert values == [again.get_str("R") for _ in range(20)]
    assert {int(v) for v in values if v is not None} <= {0, 2, 4, 6, 8}
    assert first.get_str("C") in {"a", "b", "c"}


def test_environment_overrides() -> None:
    config = Config.from_text("A = file\n", environ={"_CONDOR_A": "env", "_condor_B": "b"})
    assert config.get_str("A") == "env"
    assert config.get_str("B") == "b"


def test_detected_values_come_from_the_probe() -> None:
    facts = fake_machine(logical_cpus=16, physical_cpus=8, memory_mib=4096,
                         full_hostname="node1.example.org")
    config = Config.from_text("", facts=facts)
    assert config.get_int("DETECTED_CORES") == 16
    assert config.get_int("DETECTED_CPUS") == 16
    assert config.get_int("NUM_CPUS") == 16
    assert config.get_int("DETECTED_MEMORY") == 4096
    assert config.get_str("HOSTNAME") == "node1"
    assert config.get_str("FILESYSTEM_DOMAIN") == "node1.example.org"
    no_hyper = Config.from_text("COUNT_HYPERTHREAD_CPUS = false\n", facts=facts)
    assert no_hyper.get_int("DETECTED_CPUS") == 8


def test_complex_conditions_go_to_the_callback_when_one_is_given() -> None:
    from htcpool.config.conditions import ConditionError, IfStack, evaluate_condition

    seen: list[str] = []

    def decide(text: str) -> bool:
        seen.append(text)
        return text == "3 > 1"

    values = {"A": "3"}
    expand = lambda text: text.replace("$(A)", values["A"])  # noqa: E731
    assert evaluate_condition("$(A) > 1", expand, values.get, decide) is True
    assert evaluate_condition("! $(A) > 1", expand, values.get, decide) is False
    assert seen == ["3 > 1", "3 > 1"]
    # simple forms never reach the callback
    assert evaluate_condition("defined A", expand, values.get, decide) is True
    assert evaluate_condition("0", expand, values.get, decide) is False
    assert len(seen) == 2
    with pytest.raises(ConditionError, match="complex conditionals are not supported"):
        evaluate_condition("$(A) > 1", expand, values.get)
    ifs = IfStack(decide)
    assert ifs.handle("if $(A) > 1", expand, values.get) and ifs.enabled()
    assert ifs.handle("else", expand, values.get) and not ifs.enabled()
    assert ifs.handle("endif", expand, values.get) and not ifs.inside_if()


def test_logical_lines_numbering_and_submit_options() -> None:
    from htcpool.config.lines import logical_lines

    text = "A = 1 \\\n# note\n  2\nB = 3\n"
    # HTCondor's configuration quirk: the comment keeps its last character and ends the line
    assert list(logical_lines(text)) == [(2, "A = 1 e"), (3, "2"), (4, "B = 3")]
    assert list(logical_lines("A = 1 \\\n  2\n", first_number=True)) == [(1, "A = 1 2")]
    assert list(logical_lines("A = 1 \\\n  2\n")) == [(2, "A = 1 2")]
    assert list(logical_lines(text, first_number=True, skip_comments_in_continuation=True)) == [
        (1, "A = 1 2"), (4, "B = 3")]
    assert list(logical_lines("X = \\\n", first_number=True)) == [(1, "X = ")]


def test_random_generator_is_seeded_only_when_a_random_function_is_used() -> None:
    from htcpool.config.macros import LazyRandom

    plain = Config.from_text("A = 1\nB = $(A)\n", facts=fake_machine())
    assert plain.get_str("B") == "1"
    assert isinstance(plain.rng, LazyRandom) and not plain.rng.seeded
    drawn = Config.from_text("R = $RANDOM_INTEGER(0, 1000)\n", facts=fake_machine())
    assert isinstance(drawn.rng, LazyRandom) and not drawn.rng.seeded  # expanded on lookup
    assert drawn.get_str("R") == str(random.Random(0).randrange(1001))
    assert drawn.rng.seeded
