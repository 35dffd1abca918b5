#!/usr/bin/env bash
# A real S3-compatible object store on loopback, for the bucket-archive
# tests and demos: Garage (https://garagehq.deuxfleurs.fr), one node, one
# bucket, one key.
#
#   scripts/object-store.sh install          build Garage into ~/.cache/benchbook/garage (once)
#   scripts/object-store.sh start [DIR]      start it; writes DIR/env (source it)
#   scripts/object-store.sh stop [DIR]
#   scripts/object-store.sh restart [DIR]    stop and start on the same data (a fault test)
#
# DIR defaults to $BENCHBOOK_S3_DIR or /tmp/benchbook-s3. After `start`,
# `. DIR/env` sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION
# and AWS_ENDPOINT_URL, and BENCHBOOK_S3_BUCKET (the bucket's name):
#   . /tmp/benchbook-s3/env
#   benchbook --archive "s3://$BENCHBOOK_S3_BUCKET/fleet" run quick
# The S3 port is $BENCHBOOK_S3_PORT, else a free one; Garage's RPC and
# admin ports are the next two. Garage is $GARAGE, else `garage` on PATH,
# else ~/.cache/benchbook/garage/bin/garage.
set -euo pipefail

GARAGE_VERSION=2.5.0
INSTALL_ROOT=${BENCHBOOK_GARAGE_ROOT:-$HOME/.cache/benchbook/garage}
cmd=${1:-}
DIR=${2:-${BENCHBOOK_S3_DIR:-/tmp/benchbook-s3}}

die() { echo "object-store: $*" >&2; exit 1; }

garage_bin() {
    if [ -n "${GARAGE:-}" ]; then echo "$GARAGE"; return; fi
    if command -v garage >/dev/null 2>&1; then command -v garage; return; fi
    if [ -x "$INSTALL_ROOT/bin/garage" ]; then echo "$INSTALL_ROOT/bin/garage"; return; fi
    die "Garage is not installed; \`scripts/object-store.sh install\` builds it (11 minutes on a 2-core machine), or set GARAGE=/path/to/garage"
}

install() {
    if [ -x "$INSTALL_ROOT/bin/garage" ] && "$INSTALL_ROOT/bin/garage" --version 2>/dev/null | grep -q "$GARAGE_VERSION"; then
        echo "object-store: Garage $GARAGE_VERSION already in $INSTALL_ROOT"; return
    fi
    # SQLite (bundled) as its metadata engine: no LMDB, metrics or K2V to build.
    cargo install --locked --root "$INSTALL_ROOT" garage --version "$GARAGE_VERSION" \
        --no-default-features --features sqlite,bundled-libs \
        --target-dir "${BENCHBOOK_GARAGE_TARGET:-$HOME/.cache/benchbook/garage-target}"
    # The build folder (gigabytes) is not needed once the binary is installed.
    rm -rf "${BENCHBOOK_GARAGE_TARGET:-$HOME/.cache/benchbook/garage-target}"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

stop() {
    if [ -f "$DIR/garage.pid" ]; then
        local pid; pid=$(cat "$DIR/garage.pid")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$DIR/garage.pid"
    fi
}

# Start the server on DIR's config and wait until its S3 port answers.
serve() {
    local g; g=$(garage_bin)
    "$g" -c "$DIR/garage.toml" server >>"$DIR/garage.log" 2>&1 &
    echo $! >"$DIR/garage.pid"
    local port; port=$(sed -n 's/^api_bind_addr = "127.0.0.1:\([0-9]*\)".*/\1/p' "$DIR/garage.toml" | head -1)
    for _ in $(seq 100); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then return 0; fi
        kill -0 "$(cat "$DIR/garage.pid")" 2>/dev/null || die "Garage exited; see $DIR/garage.log"
        sleep 0.1
    done
    die "Garage did not open port $port in 10 s; see $DIR/garage.log"
}

start() {
    local g; g=$(garage_bin)
    stop
    rm -rf "$DIR"; mkdir -p "$DIR/meta" "$DIR/data"
    local s3=${BENCHBOOK_S3_PORT:-$(free_port)}
    local rpc; rpc=$(free_port); local admin; admin=$(free_port)
    cat >"$DIR/garage.toml" <<EOF
metadata_dir = "$DIR/meta"
data_dir = "$DIR/data"
db_engine = "sqlite"
replication_factor = 1
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"

[s3_api]
s3_region = "garage"
api_bind_addr = "127.0.0.1:$s3"
root_domain = ".s3.localhost"

[admin]
api_bind_addr = "127.0.0.1:$admin"
EOF
    serve
    local node=""
    for _ in $(seq 50); do
        node=$("$g" -c "$DIR/garage.toml" node id -q 2>/dev/null | cut -d@ -f1) && [ -n "$node" ] && break
        sleep 0.2
    done
    [ -n "$node" ] || die "no node id from Garage; see $DIR/garage.log"
    "$g" -c "$DIR/garage.toml" layout assign -z dc1 -c 1G "$node" >/dev/null
    "$g" -c "$DIR/garage.toml" layout apply --version 1 >/dev/null
    local key_id="GK$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    local secret; secret=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
    "$g" -c "$DIR/garage.toml" key import --yes -n benchbook "$key_id" "$secret" >/dev/null
    "$g" -c "$DIR/garage.toml" bucket create benchbook >/dev/null
    "$g" -c "$DIR/garage.toml" bucket allow --read --write --owner benchbook --key benchbook >/dev/null
    cat >"$DIR/env" <<EOF
export AWS_ACCESS_KEY_ID=$key_id
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=garage
export AWS_ENDPOINT_URL=http://127.0.0.1:$s3
export BENCHBOOK_S3_BUCKET=benchbook
EOF
    echo "object-store: Garage on http://127.0.0.1:$s3 (bucket benchbook); . $DIR/env"
}

case "$cmd" in
    install) install ;;
    start) start ;;
    stop) stop ;;
    restart) stop; serve ;;
    *) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
