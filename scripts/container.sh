#!/usr/bin/env bash
# Run benchbook inside a real podman container on this machine, with no
# registry: an empty image (imported from an empty tar) and the binary,
# the folders of its shared libraries and the archive bind-mounted in.
#
#   scripts/container.sh [--userland [--mpirun N]] [PODMAN RUN OPTIONS...] -- BENCHBOOK ARCHIVE [BENCHBOOK ARGS...]
#
# e.g. scripts/container.sh --cpus 1 --memory 1g -- target/release/benchbook data run memcpy
# runs `benchbook run memcpy` in a container limited to one CPU and 1 GiB,
# writing into ./data (mounted at /archive, named by BENCHBOOK_ARCHIVE).
# The manifest records the container (host.container) and its limits
# (host.cpu_quota, host.memory_limit_bytes).
#
# --userland also mounts this host's /usr, /etc, /bin, /sbin, /lib, /lib64
# read-only and the current folder at the same path (its working folder),
# with a tmpfs /tmp: enough for `--mpirun 2 -- ... run collective` (Open
# MPI's mpirun, as root, starting 2 ranks of benchbook inside) and
# for `run exec -- python3 scripts/...` inside the container, as the
# seed-004 example does. The container still has its own namespaces,
# cgroup and limits.
#
# On this VM podman needs runc (crun refuses the hybrid cgroup layout) and
# cgroupfs, and no default ulimits; a containers.conf of our own says so.
# Set BENCHBOOK_CONTAINER_DIR to keep that state elsewhere than
# /tmp/benchbook-container.
set -euo pipefail

die() { echo "container: $*" >&2; exit 1; }

opts=()
userland=0
launch=()
if [ "${1:-}" = "--userland" ]; then userland=1; shift; fi
if [ "${1:-}" = "--mpirun" ]; then
    [ "$userland" = 1 ] || die "--mpirun needs --userland (mpirun comes from this host's /usr)"
    launch=(mpirun -n "${2:?--mpirun N}"); shift 2
fi
while [ $# -gt 0 ] && [ "$1" != "--" ]; do opts+=("$1"); shift; done
[ "${1:-}" = "--" ] || die "usage: $0 [PODMAN RUN OPTIONS...] -- BENCHBOOK ARCHIVE [ARGS...]"
shift
bin=$(readlink -f "${1:?the benchbook binary}")
archive=$(mkdir -p "${2:?the archive folder}" && cd "$2" && pwd)
shift 2
command -v podman >/dev/null || die "podman not found: apt-get install podman runc"
command -v runc >/dev/null || die "runc not found: apt-get install runc"

dir=${BENCHBOOK_CONTAINER_DIR:-/tmp/benchbook-container}
mkdir -p "$dir"
printf '[containers]\ndefault_ulimits = []\n' > "$dir/containers.conf"
export CONTAINERS_CONF="$dir/containers.conf"
pod=(podman --runtime runc --cgroup-manager=cgroupfs)
image=localhost/benchbook-empty:latest
if ! "${pod[@]}" image exists "$image"; then
    tar cf "$dir/empty.tar" -T /dev/null
    "${pod[@]}" import -q "$dir/empty.tar" "$image" >/dev/null
fi
# Every folder the binary's libraries live in, read-only.
mounts=()
for d in $( (ldd "$bin" | grep -o '/[^ ]*' | xargs -n1 dirname; echo /lib64) | sort -u); do
    [ -d "$d" ] && mounts+=(-v "$d:$d:ro")
done
if [ "$userland" = 1 ]; then
    mounts=()  # the folders below hold the libraries' folders
    for d in /usr /etc /bin /sbin /lib /lib64; do
        [ -d "$d" ] && mounts+=(-v "$d:$d:ro")
    done
    here=$(pwd)
    mounts+=(-v "$here:$here:ro" -w "$here" --tmpfs /tmp
        -e OMPI_ALLOW_RUN_AS_ROOT=1 -e OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
        -e PATH=/usr/local/bin:/usr/bin:/bin)
fi
exec "${pod[@]}" run --rm "${opts[@]}" -v "$bin:/benchbook:ro" "${mounts[@]}" -v "$archive:/archive" \
    -e BENCHBOOK_ARCHIVE=/archive "$image" "${launch[@]}" /benchbook "$@"
