#!/bin/sh
# A stand-in for real work: report where we run, then compute for $1 seconds.
echo "job $2 running on $(hostname) in $(pwd) as slot ${_CONDOR_SLOT:-?}"
end=$(( $(date +%s) + ${1:-5} ))
n=0
while [ "$(date +%s)" -lt "$end" ]; do n=$((n + 1)); done
echo "job $2 finished after $n loops"
