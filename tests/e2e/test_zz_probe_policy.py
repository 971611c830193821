import time
from tests.e2e.pool import script, process_state

DESKTOP = """
SLOT_TYPE_1 = cpus=1
NUM_SLOTS_TYPE_1 = 1
SLOT_TYPE_1_PARTITIONABLE = false
NUM_CPUS = 1
use POLICY : Desktop
MINUTE = 3
StartIdleTime = 0
ContinueIdleTime = 1
MaxSuspendTime = 3
CONTINUE = ($(CPUIdle) && ($(ActivityTimer) > 1) && (KeyboardIdle > $(ContinueIdleTime)))
MachineMaxVacateTime = 3
"""

def test_probe(make_pool):
    pool = make_pool(DESKTOP)
    pool.sensors(keyboard_active_at=time.time() - 1000, load_avg=0.0)
    exe = script(pool.jobs_dir, "job.sh", 'trap \'echo got > "$1/got_usr1"; exit 0\' USR1\necho $$ > "$1/job.pid"; sleep 300 & echo $! > "$1/child.pid"; wait\n')
    c = pool.submit(f"executable = {exe}\narguments = {pool.jobs_dir}\nkill_sig = SIGUSR1\nlog = job.log\nqueue\n")
    pool.wait_for(lambda: pool.status(c) == 2 and (pool.jobs_dir / "child.pid").exists(), 30, "running")
    pid = int((pool.jobs_dir / "job.pid").read_text())
    t0 = time.time()
    pool.sensors(keyboard_active_at=time.time() + 1000, load_avg=0.0)
    pool.wait_for(lambda: process_state(pid) == "T", 10, "stopped")
    print("stopped after", time.time() - t0)
    def show():
        s = pool.slots()[0]
        print(round(time.time() - t0, 1), s["State"], s["Activity"], pool.status(c), process_state(pid))
        return (pool.jobs_dir / "got_usr1").exists()
    pool.wait_for(show, 20, "usr1")
    pool.wait_for(lambda: pool.status(c) == 1, 10, "idle")
    print((pool.jobs_dir / "job.log").read_text())
    for _ in range(5):
        show(); time.sleep(1)
