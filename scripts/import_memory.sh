#!/usr/bin/env bash
# Peak resident memory of `benchbook import` on a large log (issue 33: a
# 50 MB log must import in at most 300 MB). The log is built from a real
# published nccl-tests log in the corpus: its header, then its table rows
# repeated (as a long `-n` sweep of many tables would print) until it is
# SIZE_MB large. Prints the log's size, its rows, the import's wall time
# and its peak RSS as /usr/bin/time -v measures it.
#
#   scripts/import_memory.sh [SIZE_MB] [BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-50}"
bin="${2:-${CARGO_TARGET_DIR:-target}/release/benchbook}"
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --release, or pass its path" >&2; exit 2; }
src=tests/fixtures/import/real/nccl-tests/all_reduce_int8_8xGH200_olivia_v2.18.3_unalign.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/big_all_reduce.log"
# Header (comment lines before the first row), then one table's rows again
# and again, each copy under its own `# Collective test starting` line.
grep '^#' "$src" | head -n 40 > "$log"
rows=$(grep -v '^#' "$src" | grep -E '^ *[0-9]' || true)
[ -n "$rows" ] || { echo "no rows in $src" >&2; exit 2; }
target=$((size_mb * 1024 * 1024))
block="$tmp/block"
printf '%s\n' "$rows" > "$block"
# Grow by doubling, then cut at the target size on a line boundary.
cp "$block" "$tmp/body"
while [ "$(stat -c %s "$tmp/body")" -lt "$target" ]; do cat "$tmp/body" "$tmp/body" > "$tmp/b2"; mv "$tmp/b2" "$tmp/body"; done
head -c "$target" "$tmp/body" | sed '$d' >> "$log"
lines=$(wc -l < "$log")
echo "log: $(( $(stat -c %s "$log") / 1024 / 1024 )) MiB, $lines lines (from $src)"
/usr/bin/time -v "$bin" -q import "$log" --archive "$tmp/archive" > "$tmp/out" 2> "$tmp/time" || { cat "$tmp/out" "$tmp/time" >&2; exit 1; }
grep -E "Maximum resident set size|Elapsed \(wall clock\)" "$tmp/time"
rss_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$tmp/time")
echo "peak RSS: $((rss_kb / 1024)) MiB for a $size_mb MiB log (goal: at most 300 MiB)"
