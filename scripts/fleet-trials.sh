#!/usr/bin/env bash
# How often `fleet check` names a node, on a real Slurm cluster: K clean
# fleets (no fault: every node it names is a false alarm) and K fleets
# with one node throttled (it must name that node, and only it).
#
#   scripts/slurm-cluster.sh start 4
#   scripts/fleet-trials.sh [--clean K] [--slow K] [--node node3] [--cpu-quota 25] [--keep DIR] [--passes 3]
#
# Each fleet is $passes passes (default 3, as `fleet check` advises) of
# `srun -N$NODES --ntasks-per-node=1 benchbook run ... --take-turns`: the nodes of this one-host cluster share its CPUs, so they
# measure one at a time rather than each other's load. Needs SLURM_CONF
# (as `slurm-cluster.sh start` prints) and BENCHBOOK (the binary; default
# target/release/benchbook). Prints one line per fleet and the counts;
# --keep DIR keeps the runs (fleets clean-I and slow-I) in archive DIR.
set -euo pipefail

clean=10 slow=10 node=node3 quota=25 keep="" passes=3
while [ $# -gt 0 ]; do
    case $1 in
        --clean) clean=$2; shift 2 ;;
        --slow) slow=$2; shift 2 ;;
        --node) node=$2; shift 2 ;;
        --cpu-quota) quota=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        --passes) passes=$2; shift 2 ;;
        *) echo "fleet-trials: unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
bb=${BENCHBOOK:-$here/../target/release/benchbook}
[ -x "$bb" ] || { echo "fleet-trials: no benchbook at $bb (cargo build --release, or set BENCHBOOK)" >&2; exit 2; }
: "${SLURM_CONF:?export SLURM_CONF as scripts/slurm-cluster.sh start prints}"
nodes=$(sinfo -h -N -o %N | sort -u | wc -l)
archive=${keep:-$(mktemp -d)}
trap '[ -n "$keep" ] || rm -rf "$archive"; "$here/slurm-cluster.sh" throttle "$node" off >/dev/null 2>&1 || true' EXIT
# The suite: memcpy at 4 and 64 MiB, one thread, half a second a point.
suite=(run memcpy --sizes 4M,64M --threads 1 --max-time 0.5)

# trial NAME: one fleet; prints the nodes `fleet check` would drain.
# (It runs inside $(...), where set -e is off: failures return by hand.)
trial() {
    for _ in $(seq 1 "$passes"); do
        srun -N"$nodes" --ntasks-per-node=1 "$bb" -q "${suite[@]}" --fleet "$1" --take-turns --archive "$archive" ||
            { echo "fleet-trials: a pass of fleet $1 failed" >&2; return 1; }
    done
    "$bb" fleet check "$1" --json --fail-on never --archive "$archive" |
        python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["drain"]))'
}

false_alarms=0
for i in $(seq 1 "$clean"); do
    drained=$(trial "clean-$i") || exit 1
    echo "clean fleet $i: ${drained:-nobody} named"
    [ -z "$drained" ] || false_alarms=$((false_alarms + 1))
done
"$here/slurm-cluster.sh" throttle "$node" "$quota"
found=0
for i in $(seq 1 "$slow"); do
    drained=$(trial "slow-$i") || exit 1
    echo "fleet $i with $node at $quota %: ${drained:-nobody} named"
    [ "$drained" = "$node" ] && found=$((found + 1))
done
echo "false alarms: $false_alarms of $clean clean fleets of $nodes nodes ($passes runs per node)"
echo "found: $found of $slow fleets named $node, and only $node"
