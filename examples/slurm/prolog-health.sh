#!/usr/bin/env bash
# A Slurm node health check with membench: the health profile on each GPU, measured
# against the expectation file of the node's GPU model, and the node drained when a GPU is
# below it or the check cannot run. Install it on every GPU node and name it in slurm.conf:
#
#   Epilog=/etc/slurm/membench-health.sh   # after each job: no job waits for it
#   Prolog=/etc/slurm/membench-health.sh   # before each job: a sick node starts no job
#
# As an epilog it costs no job any time, and a sick GPU takes no further job. As a prolog
# it delays each job's start by the check (the health profile takes seconds to a minute
# per GPU); a failing prolog makes Slurm requeue the job elsewhere. Raise
# PrologEpilogTimeout if the check needs longer. HealthCheckProgram= runs it too.
#
# slurmd runs it as root with a bare environment, so set these here or in a wrapper:
MEMBENCH="${MEMBENCH:-/usr/local/bin/membench}"
# The expectation file for this node's GPU model (results/expect/ in the repository).
MEMBENCH_EXPECT="${MEMBENCH_EXPECT:-/etc/membench/expect.csv}"
# Where each check leaves its rows and its log.
MEMBENCH_HEALTH_DIR="${MEMBENCH_HEALTH_DIR:-/var/log/membench}"
# Which adapters to check, e.g. "0 1": default the job's GPUs (SLURM_JOB_GPUS, set in a
# prolog or epilog), else every hardware adapter that `membench devices` lists.
MEMBENCH_HEALTH_ADAPTERS="${MEMBENCH_HEALTH_ADAPTERS:-}"
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
#
# Exit status: 0 every GPU healthy (or no GPU here to check); 1 a GPU is below its
# expectation or could not be checked, and the node has been drained with the reason.
#
# membench's `run --profile health --expect FILE` exits 0 when healthy, 3 when below the
# expectation (the cases named on stderr), 1 when it could not run or failed verification,
# 2 on a usage error. Each of 1, 2 and 3 drains the node: the reason names the GPU and the
# log, and `scontrol update nodename=NODE state=resume` returns it after a look.
set -uo pipefail

node="${SLURMD_NODENAME:-$(hostname -s)}"
mkdir -p "$MEMBENCH_HEALTH_DIR"
log="$MEMBENCH_HEALTH_DIR/health-$(date +%Y%m%dT%H%M%S)-$$.log"

note() {
  echo "membench-health: $*" >>"$log"
  command -v logger >/dev/null && logger -t membench-health -- "$*"
  echo "membench-health: $*" >&2
}
drain() {
  note "draining $node: $1"
  scontrol update nodename="$node" state=drain reason="membench health: $1" ||
    note "scontrol could not drain $node"
  exit 1
}

adapters="$MEMBENCH_HEALTH_ADAPTERS"
if [ -z "$adapters" ] && [ -n "${SLURM_JOB_GPUS:-}" ]; then
  # Slurm's GPU indexes; as the check runs outside the job's cgroup it sees every GPU,
  # NVIDIA's in PCI bus order, which is the order of the gres.conf /dev/nvidiaN files.
  adapters="${SLURM_JOB_GPUS//,/ }"
fi
if [ -z "$adapters" ]; then
  [ -x "$MEMBENCH" ] || drain "$MEMBENCH is missing"
  gpus=$("$MEMBENCH" devices 2>>"$log" |
    grep -cE '^ +backend .*, type (DiscreteGpu|IntegratedGpu|VirtualGpu)')
  if [ "${gpus:-0}" -eq 0 ]; then
    note "no GPU adapter on $node: nothing to check"
    exit 0
  fi
  adapters=$(seq 0 $((gpus - 1)))
fi
[ -x "$MEMBENCH" ] || drain "$MEMBENCH is missing"
[ -r "$MEMBENCH_EXPECT" ] || drain "no expectation file $MEMBENCH_EXPECT"

for adapter in $adapters; do
  "$MEMBENCH" run --adapter "$adapter" --profile health --expect "$MEMBENCH_EXPECT" \
    --out "$MEMBENCH_HEALTH_DIR/{host}-{uuid}.csv" >>"$log" 2>&1
  status=$?
  case $status in
  0) note "GPU $adapter healthy" ;;
  3) drain "GPU $adapter below expectation, see $log" ;;
  *) drain "GPU $adapter check failed (exit $status), see $log" ;;
  esac
done
exit 0
