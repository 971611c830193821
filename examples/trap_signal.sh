#!/bin/sh
# A job that traps the signal HTCondor sends when it is vacated (kill_sig = SIGUSR1):
# it saves a checkpoint and exits; the next run resumes from the checkpoint.
state=${2:-checkpoint.txt}
start=0
[ -f "$state" ] && start=$(cat "$state")
echo "starting at step $start"
trap 'echo "caught SIGUSR1 at step $i: checkpointing"; echo "$i" > "$state"; exit 0' USR1
i=$start
while [ "$i" -lt "${1:-20}" ]; do
    i=$((i + 1))
    sleep 1 &
    wait $!
done
echo "done after step $i"
rm -f "$state"
