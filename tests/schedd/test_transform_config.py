"""Job transforms as an administrator writes them in condor_config: the body reaches the schedd
unexpanded, so ``$(MY.attr)`` is the job's and other ``$(NAME)`` the configuration's; every
statement form; what cannot apply is reported with the transform's name."""

from __future__ import annotations

import pytest

from htcpool.classad import ClassAd, EvalContext, parseOne
from htcpool.config import Config
from htcpool.schedd import JobQueue, Transform, settings_from_config
from tests.config.reference_reader import ReferenceReader

SEED = """
DOCKER_IMAGE = "SL6"
JOB_TRANSFORM_NAMES = SL6ToDocker
JOB_TRANSFORM_SL6ToDocker @=end
   # match only vanilla jobs that have WantSL6 and do not already have a DockerImage
   REQUIREMENTS JobUniverse==5 && WantSL6 && DockerImage =?= undefined
   SET  WantDocker = true
   SET  DockerImage = $(DOCKER_IMAGE)
   SET  Requirements = TARGET.HasDocker && $(MY.Requirements)
@end
"""


def settings(text: str):
    config = Config.from_text(text, subsystem="SCHEDD")

    def get(name: str) -> str | None:
        return config.get_str(name, subsystem="SCHEDD")

    return settings_from_config(get, raw=lambda name: config.raw(name, subsystem="SCHEDD"))


def test_htcondors_param_expands_my_away_and_so_does_ours_but_the_schedd_reads_the_body_raw() -> None:
    reader = ReferenceReader()
    try:
        reference = reader.values(SEED, ["JOB_TRANSFORM_SL6ToDocker"])
    except (OSError, RuntimeError) as e:  # no bindings: the htcpool half still runs
        pytest.skip(f"HTCondor's reader is not available: {e}")
    finally:
        reader.close()
    if "__error__" in reference:
        pytest.skip(f"HTCondor's reader is not available: {reference['__error__'][-200:]}")
    kind, value = reference["JOB_TRANSFORM_SL6ToDocker"]
    config = Config.from_text(SEED, subsystem="SCHEDD")
    assert value == config.get_str("JOB_TRANSFORM_SL6ToDocker")  # param(): $(MY.Requirements) is empty
    assert value.endswith("SET  Requirements = TARGET.HasDocker && ")
    assert "$(MY.Requirements)" in (config.raw("JOB_TRANSFORM_SL6ToDocker") or "")  # what the schedd reads


def test_the_seeds_transform_from_condor_config_rewrites_requirements_against_the_job() -> None:
    s = settings(SEED)
    assert s.problems == []
    queue = JobQueue(s)
    ad = parseOne('[JobUniverse = 5; WantSL6 = true; Requirements = TARGET.Memory >= 512; JobStatus = 1]')
    plain = parseOne('[JobUniverse = 5; Requirements = TARGET.Memory >= 512; JobStatus = 1]')
    cluster, warnings = queue.submit("alice", [ad, plain], 100.0)
    assert warnings == []
    job, other = queue.jobs[(cluster, 0)], queue.jobs[(cluster, 1)]
    assert str(job.lookup("Requirements")) == "TARGET.HasDocker && TARGET.Memory >= 512"
    assert (job["WantDocker"], job["DockerImage"]) == (True, "SL6")
    assert "DockerImage" not in other and str(other.lookup("Requirements")) == "TARGET.Memory >= 512"


def test_a_statement_that_cannot_apply_is_reported_with_the_transforms_name_and_line() -> None:
    s = settings(SEED)
    queue = JobQueue(s)
    no_requirements = parseOne('[JobUniverse = 5; WantSL6 = true; JobStatus = 1]')
    _, warnings = queue.submit("alice", [no_requirements, no_requirements.copy()], 100.0)
    assert len(warnings) == 1  # once for the cluster, not once per job
    assert warnings[0].startswith(
        "JOB_TRANSFORM_SL6ToDocker, line 4: SET Requirements = TARGET.HasDocker && $(MY.Requirements): ")
    assert warnings[0].endswith("the statement is skipped")
    assert queue.warnings == warnings  # the driver logs them too
    assert queue.jobs[(1, 0)]["DockerImage"] == "SL6"  # the other statements applied


def test_bad_transforms_are_reported_at_configuration_and_the_others_still_apply() -> None:
    s = settings(SEED.replace("JOB_TRANSFORM_NAMES = SL6ToDocker", "JOB_TRANSFORM_NAMES = Gone Broken SL6ToDocker")
                 + "JOB_TRANSFORM_Broken @=end\n  FROBNICATE all\n@end\n")
    assert [t.name for t in s.transforms] == ["SL6ToDocker"]
    assert s.problems[0].startswith("JOB_TRANSFORM_Gone: not defined")
    assert s.problems[1] == ("JOB_TRANSFORM_Broken, line 1: unknown statement 'FROBNICATE all'; "
                             "the transform is skipped")


def test_a_requirements_line_that_does_not_parse_is_reported() -> None:
    t = Transform.parse("T", "REQUIREMENTS JobUniverse == == 5\nSET A = 1\n")
    ad = ClassAd({"JobUniverse": 5})
    result = t.apply(ad, EvalContext())
    assert not result.applied and "A" not in ad
    assert result.errors[0].startswith("JOB_TRANSFORM_T, line 1: REQUIREMENTS 'JobUniverse == == 5' does not parse")


def apply(body: str, ad: str, lookup: dict[str, str] | None = None) -> ClassAd:
    job = parseOne(ad)
    result = Transform.parse("T", body, (lookup or {}).get).apply(job, EvalContext())
    assert result.errors == []
    return job


def test_each_statement_form() -> None:
    assert apply("DEFAULT A 1\nDEFAULT B = 2", "[A = 5]").get("A") == 5
    assert apply("DEFAULT A 1\nDEFAULT B = 2", "[A = 5]").get("B") == 2
    assert apply("EVALSET Sum = X + 1", "[X = 2]").get("Sum") == 3
    assert apply("EVALMACRO n = X * 2\nSET Twice = $(n)", "[X = 4]").get("Twice") == 8
    assert apply("COPY X Y", "[X = 4]").get("Y") == 4
    renamed = apply("RENAME X, Y", "[X = 4]")
    assert "X" not in renamed and renamed.get("Y") == 4
    assert "X" not in apply("DELETE X", "[X = 4]")
    copied = apply("COPY /^Resource(.+)/ Original\\1", "[ResourceA = 1; ResourceB = 2]")
    assert (copied.get("OriginalA"), copied.get("OriginalB")) == (1, 2)
    moved = apply("RENAME /^Old(.*)/ New\\1", "[OldX = 1]")
    assert "OldX" not in moved and moved.get("NewX") == 1
    assert "TmpA" not in apply("DELETE /^tmp/", "[TmpA = 1; Keep = 2]")
    assert apply("NAME whatever\nUNIVERSE vanilla\nSET A 1", "[]").get("A") == 1
    assert "A" not in apply("REQUIREMENTS X > 1\nSET A 1", "[X = 1]")


def test_macros_my_attributes_and_the_configuration() -> None:
    job = apply('id = "$(MY.Owner)@$(DOMAIN)"\nSET Who = $(id)\nSET Req = $(MY.Requirements) && $(EXTRA)',
                '[Owner = "alice"; Requirements = X > 1]', {"DOMAIN": "example.org", "EXTRA": "$(INNER)",
                                                           "INNER": "Y < 2"})
    assert job.get("Who") == "alice@example.org"  # a string attribute expands without its quotes
    assert str(job.lookup("Req")) == "X > 1 && Y < 2"  # configuration macros expand, recursively
    both = apply("if defined MY.Flag\n SET A 1\nelse\n SET A 2\nendif", "[Flag = 0]")
    assert both.get("A") == 1
    assert apply("if defined MY.Flag\n SET A 1\nelse\n SET A 2\nendif", "[]").get("A") == 2
    assert apply("SET A = $(MY.Missing:2) + 1", "[]").eval("A") == 3


def test_default_sets_an_attribute_that_is_missing_or_undefined_only() -> None:
    job = apply("DEFAULT A 1\nDEFAULT B 3\nDEFAULT C 4", "[A = undefined; B = 2]")
    assert (job.get("A"), job.get("B"), job.get("C")) == (1, 2, 4)
