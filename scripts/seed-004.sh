#!/usr/bin/env bash
# Seed 004 on this machine: bare metal against a real podman container, and
# 2 partitions (one CPU each) against one instance on the whole machine.
#
#   scripts/seed-004.sh [ARCHIVE] [ROUNDS]      (default data/seed-004, 3)
#
# Each round measures, in turn (interleaved, so slow drift hits both sides):
#   bare          memcpy + STREAM (2 threads), MPI collectives (mpirun -n 2),
#                 and a serving workload (scripts/serve_bench.py: an HTTP
#                 server and an open-loop load generator) under `run exec`;
#   container     the same, inside podman (scripts/container.sh --userland);
#   partitions-2  STREAM (1 thread) and the serving workload, as 2 instances
#                 at once on disjoint CPUs (`--partitions 2`), each serving
#                 half the offered request rate.
# Then the report:
#   benchbook report label:bare label:container label:partitions-2 --kind compare
# Needs the release binary built with MPI (`cargo build --release --features
# mpi`), Open MPI, podman and runc (`.ci/run` installs them), python3.
set -euo pipefail

archive=${1:-data/seed-004}
rounds=${2:-3}
B=${BENCHBOOK:-target/release/benchbook}
[ -x "$B" ] || { echo "seed-004: $B not built: cargo build --release --features mpi" >&2; exit 1; }
# Open MPI refuses root unless told; CI runs as root.
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

sweep=(run memcpy stream --threads 2 --sizes 64K..64M --stream-sizes 1M..64M --max-time 0.3)
mpi=(run collective --sizes 64K..4M --max-time 0.3)
serve=(run exec --repeat 3 -- python3 scripts/serve_bench.py --work-kib 4096 --rates 100,200,400,600 --seconds 2)
part_sweep=(run stream --threads 1 --stream-sizes 1M..64M --max-time 0.3 --partitions 2)
part_serve=(run exec --repeat 3 --partitions 2 -- python3 scripts/serve_bench.py --work-kib 4096 --rates 100,200,400,600 --seconds 2)

# Put --label before a `run exec` command's `--`.
labelled() {
    local label=$1; shift
    local out=() done=0
    for a in "$@"; do
        if [ "$a" = "--" ] && [ $done = 0 ]; then out+=(--label "$label"); done=1; fi
        out+=("$a")
    done
    [ $done = 1 ] || out+=(--label "$label")
    printf '%s\0' "${out[@]}"
}
run_bare() { local l=$1; shift; mapfile -d '' args < <(labelled "$l" "$@"); "$B" -q --archive "$archive" "${args[@]}" >/dev/null; }
run_mpi() { local l=$1; shift; mapfile -d '' args < <(labelled "$l" "$@"); mpirun -n 2 "$B" -q --archive "$archive" "${args[@]}" >/dev/null; }
run_box() {
    local l=$1; shift
    local pre=(--userland)
    if [ "$1" = "--mpirun" ]; then pre+=(--mpirun "$2"); shift 2; fi
    mapfile -d '' args < <(labelled "$l" "$@")
    scripts/container.sh "${pre[@]}" -- "$B" "$archive" -q "${args[@]}" >/dev/null
}

for r in $(seq 1 "$rounds"); do
    echo "seed-004: round $r of $rounds" >&2
    run_bare bare "${sweep[@]}"
    run_box container "${sweep[@]}"
    run_mpi bare "${mpi[@]}"
    run_box container --mpirun 2 "${mpi[@]}"
    run_bare bare "${serve[@]}"
    run_box container "${serve[@]}"
    run_bare partitions-2 "${part_sweep[@]}"
    run_bare partitions-2 "${part_serve[@]}"
done
"$B" --archive "$archive" report label:bare label:container label:partitions-2 --kind compare \
    --notes reports/notes/seed-004.md --out reports/seed-004-container-and-partitions
