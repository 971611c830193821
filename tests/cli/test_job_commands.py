"""The schedd commands behind condor_suspend, condor_continue and condor_qedit, in the core.

condor_suspend and condor_continue are forwarded to the job's startd (``SuspendClaim`` /
``ContinueClaim`` naming the claim); the job becomes Suspended only when the startd reports
it. condor_qedit's rules: owner or queue super user; immutable attributes never change once
set; protected ones only for super users; JobStatus only through the job commands.
"""

from __future__ import annotations

from htcpool.protocol import ActionResult, JobAction, JobActionKind, JobEvent
from htcpool.protocol.schedd import EditJobs
from htcpool.protocol.startd import ContinueClaim, SuspendClaim
from htcpool.schedd.errors import BadRequest
from tests.schedd.helpers import T0, run, schedd, submit, to_startd, update


def _running():
    core = schedd()
    cluster = submit(core, "Owner = \"alice\"; Cmd = \"/bin/sleep\"")
    run(core, (cluster, 0))
    core.handle(update("c1", JobEvent.STARTED), T0)
    return core, cluster


def test_suspend_is_forwarded_to_the_claims_startd_and_the_report_suspends_the_job():
    core, cluster = _running()
    out = core.handle(JobAction(JobActionKind.SUSPEND, "alice", (f"{cluster}.0",)), T0 + 1)
    assert out.reply == ActionResult((f"{cluster}.0",), ())
    assert to_startd(out) == [SuspendClaim("slot1_1@ep", "c1")]
    assert core.queue.jobs[(cluster, 0)]["JobStatus"] == 2  # not until the startd says so
    core.handle(update("c1", JobEvent.SUSPENDED, processes=1), T0 + 2)
    assert core.queue.jobs[(cluster, 0)]["JobStatus"] == 7
    again = core.handle(JobAction(JobActionKind.SUSPEND, "alice", (f"{cluster}.0",)), T0 + 3).reply
    assert again.done == () and "Suspended" in again.errors[0]
    out = core.handle(JobAction(JobActionKind.CONTINUE, "alice", (f"{cluster}.0",)), T0 + 4)
    assert to_startd(out) == [ContinueClaim("slot1_1@ep", "c1")]
    core.handle(update("c1", JobEvent.CONTINUED), T0 + 5)
    assert core.queue.jobs[(cluster, 0)]["JobStatus"] == 2


def test_suspend_of_an_idle_job_or_by_another_user_is_refused():
    core = schedd()
    cluster = submit(core, "Owner = \"alice\"")
    idle = core.handle(JobAction(JobActionKind.SUSPEND, "alice", (f"{cluster}.0",)), T0).reply
    assert idle.done == () and "Idle" in idle.errors[0]
    core2, c2 = _running()
    other = core2.handle(JobAction(JobActionKind.SUSPEND, "bob", (f"{c2}.0",)), T0).reply
    assert other.done == () and "may not" in other.errors[0]


def test_qedit_sets_attributes_and_keeps_the_rules():
    core = schedd(protected_job_attrs=frozenset({"Rank"}))
    cluster = submit(core, "Owner = \"alice\"; Rank = 1", "Owner = \"alice\"; Rank = 1")
    done = core.handle(EditJobs("alice", ("Foo", "RequestMemory"), ('"bar"', "2048"), (str(cluster),)), T0).reply
    assert done.done == (f"{cluster}.0", f"{cluster}.1")
    assert core.queue.jobs[(cluster, 1)]["Foo"] == "bar"
    assert core.queue.jobs[(cluster, 1)]["RequestMemory"] == 2048
    owner = core.handle(EditJobs("alice", ("Owner",), ('"bob"',), (f"{cluster}.0",)), T0).reply
    assert owner.done == () and "immutable" in owner.errors[0]
    status = core.handle(EditJobs("alice", ("JobStatus",), ("4",), (f"{cluster}.0",)), T0).reply
    assert status.done == () and core.queue.jobs[(cluster, 0)]["JobStatus"] == 1
    protected = core.handle(EditJobs("alice", ("Rank",), ("5",), (f"{cluster}.0",)), T0).reply
    assert protected.done == () and "protected" in protected.errors[0]
    by_root = core.handle(EditJobs("root", ("Rank",), ("5",), (f"{cluster}.0",)), T0).reply
    assert by_root.done == (f"{cluster}.0",) and core.queue.jobs[(cluster, 0)]["Rank"] == 5
    bob = core.handle(EditJobs("bob", ("Foo",), ("1",), (f"{cluster}.0",)), T0).reply
    assert bob.done == () and core.queue.jobs[(cluster, 0)]["Foo"] == "bar"


def test_qedit_with_a_constraint_and_bad_values():
    core = schedd()
    cluster = submit(core, "Owner = \"alice\"; X = 1", "Owner = \"alice\"; X = 2")
    reply = core.handle(EditJobs("alice", ("Y",), ("X * 10",), (), "X == 2"), T0).reply
    assert reply.done == (f"{cluster}.1",)
    assert str(core.queue.jobs[(cluster, 1)].lookup("Y")) == "X * 10"
    for names, values in ((("Y",), ("1 +",)), (("9bad",), ("1",)), ((), ()), (("Y",), ())):
        try:
            core.handle(EditJobs("alice", names, values, (str(cluster),)), T0)
        except BadRequest as e:
            assert str(e)
        else:
            raise AssertionError(f"{names} = {values} was accepted")


def test_crontab_next_run_is_recomputed_on_reconfig_and_restart():
    from htcpool.schedd import MemoryStore, Schedd, ScheddSettings

    store = MemoryStore()
    core = schedd(store)
    cluster = submit(core, 'Owner = "alice"; CronMinute = "0"; CronHour = "12"; DeferralWindow = 60')
    first = core.queue.jobs[(cluster, 0)]["DeferralTime"]
    assert first % 86400 == 12 * 3600 and first > T0  # noon UTC, the next one after T0
    core.reconfigure(ScheddSettings(schedd_name="schedd@submit", local_zone=3600), T0 + 10)
    assert core.queue.jobs[(cluster, 0)]["DeferralTime"] == first - 3600  # noon one hour east of UTC
    later = first + 86400 * 3 + 7  # the schedd was down for three days
    restarted = Schedd(ScheddSettings(schedd_name="schedd@submit"), later, store=store,
                       jobs=dict(core.queue.jobs), next_cluster=cluster + 1, host="submit")
    restarted.start(later, "http://submit:1", "<127.0.0.1:1>")
    assert restarted.queue.jobs[(cluster, 0)]["DeferralTime"] == first + 86400 * 4
