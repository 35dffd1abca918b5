#!/usr/bin/env bash
# A real Slurm cluster of N nodes on this one host, for fleet tests and
# demos: munged, slurmctld, and one `slurmd -N nodeK` per node, each with
# its own port (Debian's slurm-wlm packages; run as root).
#
#   scripts/slurm-cluster.sh start N [--slow NODE --cpu-quota PCT]
#   scripts/slurm-cluster.sh stop
#
# --slow starts NODE's slurmd inside a CPU cgroup limited to PCT % of one
# CPU, so every task Slurm runs there is genuinely slower: an injected
# fault, not a faked number. The state lives in $BENCHBOOK_SLURM_DIR
# (default /tmp/benchbook-slurm); `export SLURM_CONF=$DIR/slurm.conf`
# before calling srun, as the script prints.
set -euo pipefail

DIR=${BENCHBOOK_SLURM_DIR:-/tmp/benchbook-slurm}
CG_NAME=benchbook-slow

die() { echo "slurm-cluster: $*" >&2; exit 1; }

stop() {
    for f in "$DIR"/slurmd-*.pid "$DIR"/slurmctld.pid "$DIR"/munged.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    sleep 1
    pkill -f "slurmd -N node.* -f $DIR/slurm.conf" 2>/dev/null || true
    pkill -f "slurmctld -f $DIR/slurm.conf" 2>/dev/null || true
    rmdir "/sys/fs/cgroup/cpu/$CG_NAME" 2>/dev/null || rmdir "/sys/fs/cgroup/$CG_NAME" 2>/dev/null || true
    rm -f "$DIR"/*.pid
}

# Put this shell in a cgroup limited to $1 % of one CPU (v1 or v2).
limit_self() {
    # A 10 ms period: a sample longer than the quota is throttled inside
    # itself, as a node with a slow or shared CPU would be.
    local pct=$1 period=10000
    local quota=$((period * pct / 100))
    if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
        mkdir -p "/sys/fs/cgroup/cpu/$CG_NAME"
        echo $period > "/sys/fs/cgroup/cpu/$CG_NAME/cpu.cfs_period_us"
        echo $quota > "/sys/fs/cgroup/cpu/$CG_NAME/cpu.cfs_quota_us"
        echo "$BASHPID" > "/sys/fs/cgroup/cpu/$CG_NAME/cgroup.procs"
    elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then
        mkdir -p "/sys/fs/cgroup/$CG_NAME"
        echo "$quota $period" > "/sys/fs/cgroup/$CG_NAME/cpu.max"
        echo "$BASHPID" > "/sys/fs/cgroup/$CG_NAME/cgroup.procs"
    else
        die "no writable cpu cgroup to slow a node with"
    fi
}

start() {
    local n=$1 slow=${2:-} quota=${3:-}
    [ "$(id -u)" = 0 ] || die "run as root (slurmd and munged need it)"
    command -v slurmctld >/dev/null || die "slurmctld not found: apt-get install slurmctld slurmd slurm-client munge"
    stop
    rm -rf "$DIR/state" "$DIR/spool"
    mkdir -p "$DIR/state" "$DIR/spool" "$DIR/munge"
    # munge: a key of our own, its own socket, no system service needed.
    if [ ! -f "$DIR/munge/munge.key" ]; then
        dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
        chmod 400 "$DIR/munge/munge.key"
    fi
    mkdir -p /run/munge
    munged --force --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munged.pid" \
        --socket=/run/munge/munge.socket.2 --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed"
    local cpus
    cpus=$(nproc --all)
    {
        echo "ClusterName=benchbook"
        echo "SlurmctldHost=localhost"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "SlurmctldPort=$((6817 + RANDOM % 100))"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "StateSaveLocation=$DIR/state"
        echo "SlurmdSpoolDir=$DIR/spool/%n"
        echo "SlurmctldPidFile=$DIR/slurmctld.pid"
        echo "SlurmdPidFile=$DIR/slurmd-%n.pid"
        echo "SlurmctldLogFile=$DIR/slurmctld.log"
        echo "SlurmdLogFile=$DIR/slurmd-%n.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "SchedulerType=sched/builtin"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_CPU"
        echo "ReturnToService=2"
        echo "MpiDefault=none"
        echo "JobCompType=jobcomp/none"
        echo "InactiveLimit=0"
        echo "KillWait=5"
        for k in $(seq 1 "$n"); do
            echo "NodeName=node$k NodeHostname=localhost Port=$((17000 + k)) CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=fleet Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } > "$DIR/slurm.conf"
    slurmctld -f "$DIR/slurm.conf"
    for k in $(seq 1 "$n"); do
        mkdir -p "$DIR/spool/node$k"
        if [ "node$k" = "$slow" ]; then
            ( limit_self "$quota"; exec slurmd -N "node$k" -f "$DIR/slurm.conf" )
        else
            slurmd -N "node$k" -f "$DIR/slurm.conf"
        fi
    done
    # Wait until every node is idle.
    for _ in $(seq 1 60); do
        local idle
        idle=$(SLURM_CONF="$DIR/slurm.conf" sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        if [ "$idle" -ge "$n" ]; then
            echo "export SLURM_CONF=$DIR/slurm.conf   # $n nodes idle${slow:+; $slow limited to $quota % of a CPU}"
            return 0
        fi
        sleep 1
    done
    SLURM_CONF="$DIR/slurm.conf" sinfo -N >&2 || true
    tail -n 20 "$DIR/slurmctld.log" >&2 || true
    die "the nodes did not come up in 60 s (logs in $DIR)"
}

case "${1:-}" in
    start)
        n=${2:?start needs a node count}
        shift 2
        slow="" quota=""
        while [ $# -gt 0 ]; do
            case $1 in
                --slow) slow=$2; shift 2 ;;
                --cpu-quota) quota=$2; shift 2 ;;
                *) die "unknown option $1" ;;
            esac
        done
        [ -z "$slow" ] || [ -n "$quota" ] || die "--slow needs --cpu-quota PCT"
        start "$n" "$slow" "$quota"
        ;;
    stop) stop ;;
    *) die "usage: $0 start N [--slow NODE --cpu-quota PCT] | stop" ;;
esac
