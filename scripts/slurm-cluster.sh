#!/usr/bin/env bash
# A real Slurm cluster of N nodes on this one host, for fleet tests and
# demos: munged, slurmctld, and one `slurmd -N nodeK` per node, each with
# its own port (Debian's slurm-wlm packages; run as root).
#
#   scripts/slurm-cluster.sh start N [--slow NODE --cpu-quota PCT]
#                                    [--health-check FLEET --archive DIR [--interval S] [--benchbook BIN] [--suite ARGS]]
#   scripts/slurm-cluster.sh throttle NODE PCT|off
#   scripts/slurm-cluster.sh stop
#
# --health-check makes `benchbook fleet gate FLEET` the cluster's
# HealthCheckProgram (every S seconds, default 10, on every node): each
# node gates itself against the fleet in archive DIR and drains itself
# through slurmctld when bad, resuming itself once it passes
# ($DIR/healthcheck.sh is the wrapper; each node's output goes to
# $DIR/gate-NODE.log; $DIR/env-NODE, if present, is sourced first, for
# that node alone). --suite sets the gate's `run` arguments (default:
# memcpy --sizes 4M,64M --threads 1 --max-time 0.5).
#
# Each node's slurmd runs in a CPU cgroup of its own (benchbook-NODE), so
# a node can be slowed at any time: `throttle node3 25` limits every task
# Slurm runs there to 25 % of one CPU, genuinely slower: an injected
# fault, not a faked number (`start --slow` does it from the start;
# `throttle node3 off` lifts it). The state lives in $BENCHBOOK_SLURM_DIR
# (default /tmp/benchbook-slurm); `export SLURM_CONF=$DIR/slurm.conf`
# before calling srun, as the script prints.
set -euo pipefail

DIR=${BENCHBOOK_SLURM_DIR:-/tmp/benchbook-slurm}
# node K's slurmd listens on PORT+K, slurmctld on PORT+100..199; a second
# cluster (the tests start their own) needs its own DIR and PORT.
PORT=${BENCHBOOK_SLURM_PORT:-17000}
CG_PREFIX=benchbook-$PORT-

die() { echo "slurm-cluster: $*" >&2; exit 1; }

stop() {
    for f in "$DIR"/slurmd-*.pid "$DIR"/slurmctld.pid "$DIR"/munged.pid; do
        [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
    done
    sleep 1
    pkill -f "slurmd -N node.* -f $DIR/slurm.conf" 2>/dev/null || true
    pkill -f "slurmctld -f $DIR/slurm.conf" 2>/dev/null || true
    if [ -f "$DIR/nodes" ]; then
        for node in $(cat "$DIR/nodes"); do
            local cg; cg=$(cgroup_dir "$node")
            [ -n "$cg" ] && rmdir "$cg" 2>/dev/null || true
        done
    fi
    rm -f "$DIR"/*.pid
}

# The CPU cgroup folder of node $1 (v1 or v2), or nothing when this host
# has no writable one.
cgroup_dir() {
    if [ -d /sys/fs/cgroup/cpu ] && [ -w /sys/fs/cgroup/cpu ]; then
        echo "/sys/fs/cgroup/cpu/$CG_PREFIX$1"
    elif [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; then
        echo "/sys/fs/cgroup/$CG_PREFIX$1"
    fi
}

# Limit node $1's cgroup to $2 % of one CPU, or lift the limit ($2 = off).
# A 10 ms period: a sample longer than the quota is throttled inside
# itself, as a node with a slow or shared CPU would be.
throttle() {
    local node=$1 pct=$2 period=10000 cg
    # The kernel refuses a quota under 1 ms of the 10 ms period.
    [ "$pct" = off ] || { [[ "$pct" =~ ^[0-9]+$ ]] && [ "$pct" -ge 10 ]; } ||
        die "throttle takes a whole percentage of one CPU from 10 up, or off (got $pct)"
    cg=$(cgroup_dir "$node")
    [ -n "$cg" ] && [ -d "$cg" ] || die "no CPU cgroup for $node (is the cluster started, with a writable cgroup fs?)"
    if [ -f "$cg/cpu.cfs_quota_us" ]; then
        echo $period > "$cg/cpu.cfs_period_us"
        if [ "$pct" = off ]; then echo -1 > "$cg/cpu.cfs_quota_us"; else echo $((period * pct / 100)) > "$cg/cpu.cfs_quota_us"; fi
    else
        if [ "$pct" = off ]; then echo "max $period" > "$cg/cpu.max"; else echo "$((period * pct / 100)) $period" > "$cg/cpu.max"; fi
    fi
    if [ "$pct" = off ]; then echo "slurm-cluster: $node unthrottled"; else echo "slurm-cluster: $node limited to $pct % of one CPU"; fi
}

# Put this shell in node $1's cgroup (made unlimited), when there is one.
join_cgroup() {
    local cg; cg=$(cgroup_dir "$1")
    [ -n "$cg" ] || return 0
    mkdir -p "$cg"
    echo "$BASHPID" > "$cg/cgroup.procs"
}

# The HealthCheckProgram: Slurm runs it as root with no PATH and only
# SLURMD_NODENAME set, ignores its exit code, and kills it after 60 s, so it
# names every path, finds slurm.conf by SLURM_CONF, and logs to a file.
write_health_check() {
    local fleet=$1 archive=$2 bb=$3 suite=$4 words
    # Every value quoted for the shell that runs it (%q), the suite split
    # into its words: a path or suite with spaces or quotes stays one value.
    read -r -a words <<< "$suite"
    cat > "$DIR/healthcheck.sh" <<EOF2
#!/bin/bash
# benchbook's gate as this cluster's HealthCheckProgram (scripts/slurm-cluster.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export SLURM_CONF=$(printf '%q' "$DIR/slurm.conf")
# A node's own environment, if its file exists (the tests inject a GPU
# fault on one node this way: a stand-in NVML, or a kernel log with an Xid).
if [ -r $(printf '%q' "$DIR")/env-"\$SLURMD_NODENAME" ]; then . $(printf '%q' "$DIR")/env-"\$SLURMD_NODENAME"; fi
exec $(printf '%q' "$bb") -q --archive $(printf '%q' "$archive") fleet gate $(printf '%q' "$fleet") \\
    --drain --resume-on-pass --take-turns -- $(printf '%q ' "${words[@]}") \\
    >> $(printf '%q' "$DIR")/gate-"\$SLURMD_NODENAME".log 2>&1
EOF2
    chmod 755 "$DIR/healthcheck.sh"
}

start() {
    local n=$1 slow=${2:-} quota=${3:-} hc_fleet=${4:-} hc_archive=${5:-} hc_interval=${6:-10} hc_bb=${7:-} hc_suite=${8:-}
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
    munged --force --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munged.pid" \
        --socket="$DIR/munge/socket" --log-file="$DIR/munged.log" --seed-file="$DIR/munge/seed"
    local cpus
    cpus=$(nproc --all)
    if [ -n "$hc_fleet" ]; then
        [ -n "$hc_archive" ] || die "--health-check needs --archive DIR"
        [ -x "$hc_bb" ] || die "--health-check needs benchbook at $hc_bb (--benchbook BIN)"
        # A bucket (s3://…) is passed as it is; a folder is made and named absolutely.
        if [[ "$hc_archive" != s3://* ]]; then mkdir -p "$hc_archive"; hc_archive=$(cd "$hc_archive" && pwd); fi
        write_health_check "$hc_fleet" "$hc_archive" "$(cd "$(dirname "$hc_bb")" && pwd)/$(basename "$hc_bb")" "$hc_suite"
    fi
    {
        echo "ClusterName=benchbook"
        echo "SlurmctldHost=localhost"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "SlurmctldPort=$((PORT + 100 + RANDOM % 100))"
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$DIR/munge/socket"
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
        if [ -n "$hc_fleet" ]; then
            echo "HealthCheckProgram=$DIR/healthcheck.sh"
            echo "HealthCheckInterval=$hc_interval"
            echo "HealthCheckNodeState=ANY"
        fi
        for k in $(seq 1 "$n"); do
            echo "NodeName=node$k NodeHostname=localhost Port=$((PORT + k)) CPUs=$cpus State=UNKNOWN"
        done
        echo "PartitionName=fleet Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
    } > "$DIR/slurm.conf"
    slurmctld -f "$DIR/slurm.conf"
    : > "$DIR/nodes"
    for k in $(seq 1 "$n"); do
        mkdir -p "$DIR/spool/node$k"
        echo "node$k" >> "$DIR/nodes"
        ( join_cgroup "node$k"; exec slurmd -N "node$k" -f "$DIR/slurm.conf" )
        if [ "node$k" = "$slow" ]; then
            throttle "node$k" "$quota" >/dev/null
        else
            [ -z "$(cgroup_dir "node$k")" ] || throttle "node$k" off >/dev/null
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
        slow="" quota="" hc_fleet="" hc_archive="" hc_interval=10
        hc_suite="memcpy --sizes 4M,64M --threads 1 --max-time 0.5"
        hc_bb=${BENCHBOOK:-$(cd "$(dirname "$0")/.." && pwd)/target/release/benchbook}
        while [ $# -gt 0 ]; do
            case $1 in
                --slow) slow=$2; shift 2 ;;
                --cpu-quota) quota=$2; shift 2 ;;
                --health-check) hc_fleet=$2; shift 2 ;;
                --archive) hc_archive=$2; shift 2 ;;
                --interval) hc_interval=$2; shift 2 ;;
                --benchbook) hc_bb=$2; shift 2 ;;
                --suite) hc_suite=$2; shift 2 ;;
                *) die "unknown option $1" ;;
            esac
        done
        [ -z "$slow" ] || [ -n "$quota" ] || die "--slow needs --cpu-quota PCT"
        start "$n" "$slow" "$quota" "$hc_fleet" "$hc_archive" "$hc_interval" "$hc_bb" "$hc_suite"
        ;;
    throttle) throttle "${2:?throttle needs a node}" "${3:?throttle needs PCT or off}" ;;
    stop) stop ;;
    *) die "usage: $0 start N [--slow NODE --cpu-quota PCT] [--health-check FLEET --archive DIR [--interval S] [--benchbook BIN]] | throttle NODE PCT|off | stop" ;;
esac
