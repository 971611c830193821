"""``htcpool.htcondor2.Submit`` against HTCondor's ``htcondor2.Submit``: mapping, str(), expand, itemdata.

Each case builds both objects from the same input and compares what a script can observe.
"""

from __future__ import annotations

import pytest

from htcpool import htcondor2
from tests.bindings.reference import real_htcondor2, requires_reference

pytestmark = requires_reference

TEXTS = [
    "executable = /bin/echo\narguments = $(Item) $(x)\nX = 5\nMy.Foo = 1\n+Bar = 2\nqueue item in (a, b, c)\n",
    "a = 1\nqueue\n",
    "a = 1\n",
    "",
    "a =   spaced  value  \n# comment\n\nb=2",
    "A = 1\na = 2\n",
    "a = 1\na += 2\nb += x\n",
    "x @=end\nline1\nline2\n@end\n",
    "if true\na = 1\nelse\na = 2\nendif\n",
    "if false\na = 1\nelse\na = 2\nendif\nb = $(a)\n",
    "executable = x\nqueue 1 Foo in (a)\n",
    "a = 1\nqueue\nb = 2\nqueue 2\n",
    "a = 1\nqueue x from (\n1\n2\n)\n",
    "a = 1\nqueue x,y from (\n1 2\n3 4\n5 6 7\n)\n",
    "e = 1\nqueue 3\n",
    "e = 1\nqueue in (a b)\n",
    "request_cpus = 2\nRequest_Memory = 10\n",
]
EXPANSIONS = [
    "$(Step)/$(Row)/$(ItemIndex)/$(Item)/$(Node)/$(Cluster).$(Process)/$(SUBMIT_FILE)",
    "$(a:default) $(undefined_name:fallback) $(DOLLAR)",
    "$ENV(HOME) $RANDOM_INTEGER(4,4)",
    "$(b) $(c)",
    "$INT(x,%d)",
]


def both(text: object) -> tuple[object, object]:
    return htcondor2.Submit(text), real_htcondor2.Submit(text)


@pytest.mark.parametrize("text", TEXTS)
def test_text_descriptions_read_alike(text: str) -> None:
    ours, ref = both(text)
    assert str(ours) == str(ref)
    assert list(ours) == list(ref)
    assert len(ours) == len(ref)
    assert dict(ours.items()) == dict(ref.items())
    assert ours.getQArgs() == ref.getQArgs()
    mine, theirs = ours.itemdata(), ref.itemdata()
    assert (mine is None) == (theirs is None)
    if mine is not None:
        assert list(mine) == list(theirs)


@pytest.mark.parametrize("text", EXPANSIONS)
def test_expand_agrees(text: str) -> None:
    description = {"a": "1", "b": "$(a)$(a)", "c": "$(b)-$(a)", "x": "42", "e": text}
    ours, ref = both(description)
    assert ours.expand("e") == ref.expand("e")
    assert ours.expand("c") == ref.expand("c") == "11-1"


def test_dict_input_and_keyword_arguments() -> None:
    d = {"executable": "a", "Arguments": "$(executable) $(Process)", "n": 3, "f": 1.5, "b": True}
    ours, ref = both(d)
    assert str(ours) == str(ref)
    ours["executable"] = ref["executable"] = "b"
    assert ours.expand("Arguments") == ref.expand("Arguments") == "b 0"
    assert ours.get("EXECUTABLE") == ref.get("EXECUTABLE") == "b"
    assert str(htcondor2.Submit({}, Foo="x")) == str(real_htcondor2.Submit({}, Foo="x"))
    assert str(htcondor2.Submit("a=1", queue="5")) == str(real_htcondor2.Submit("a=1", queue="5"))


def test_the_same_misuse_is_refused_the_same_way() -> None:
    for bad, error in [({"queue": "1"}, ValueError), ({"a": [1]}, TypeError), (3, TypeError)]:
        with pytest.raises(error):
            real_htcondor2.Submit(bad)
        with pytest.raises(error):
            htcondor2.Submit(bad)
    for lib in (htcondor2, real_htcondor2):
        s = lib.Submit("a = 1")
        with pytest.raises(NotImplementedError):
            del s["a"]
        with pytest.raises(TypeError):
            s["a"] = 1
        with pytest.raises(KeyError):
            s["nope"]
        with pytest.raises(KeyError):
            s.expand("nope")
        with pytest.raises(ValueError):
            lib.Submit("just garbage line\n")


@pytest.mark.parametrize("qargs", ["queue 3", "queue x in (p q)", "3 x in (p q)",
                                   "queue x,y from (\n1 2\n3 4\n)", "Item in ()"])
def test_itemdata_and_set_qargs(qargs: str) -> None:
    ours, ref = both("a = 1\n")
    mine, theirs = ours.itemdata(qargs), ref.itemdata(qargs)
    assert (mine is None) == (theirs is None)
    if mine is not None:
        assert list(mine) == list(theirs)
    ours.setQArgs(qargs)
    ref.setQArgs(qargs)
    assert str(ours) == str(ref)
    assert ours.getQArgs() == ref.getQArgs()


def test_matching_files_itemdata(tmp_path, monkeypatch) -> None:
    for name in ("b.py", "a.py", "c.txt"):
        (tmp_path / name).write_text("")
    monkeypatch.chdir(tmp_path)
    ours, ref = both("x = 1\nqueue matching *.py\n")
    assert list(ours.itemdata()) == list(ref.itemdata()) == [{"Item": "a.py"}, {"Item": "b.py"}]
