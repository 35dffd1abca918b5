#!/usr/bin/env bash
# Peak resident memory of `benchbook import` on a large log (issue 33: a
# 50 MB log must import in at most 300 MB). The log is built from a real
# published log in the corpus: its header, then its result lines repeated
# until it is SIZE_MB large (nccl: one table of that many rows, the
# hardest case, since a table is held until its end decides its collective;
# megatron: that many iteration lines; imb: one PingPong table of that
# many rows). Prints the log's size, its lines,
# the import's wall time and its peak RSS as /usr/bin/time -v measures it.
#
#   scripts/import_memory.sh [SIZE_MB] [BINARY] [nccl|nccl2021|megatron|imb|allreduce|deepspeed]
#   scripts/import_memory.sh [SIZE_MB] [BINARY] whole FILE   (FILE repeated whole: matrix and summary
#                                                             formats, many runs in one log)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-50}"
bin="${2:-${CARGO_TARGET_DIR:-target}/release/benchbook}"
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --release, or pass its path" >&2; exit 2; }
kind="${3:-nccl}"
case "$kind" in
  nccl)
    src=tests/fixtures/import/real/nccl-tests/all_reduce_int8_8xGH200_olivia_v2.18.3_unalign.txt
    header() { grep '^#' "$1" | head -n 40; }
    body() { grep -v '^#' "$1" | grep -E '^ *[0-9]'; } ;;
  nccl2021)
    # nccl-tests of 2021: an alltoall table whose rows leave redop empty.
    src=tests/fixtures/import/real/nccl-tests/alltoall_64xV100_issue78_2021_empty_redop_col_two_rows.txt
    header() { grep '^#' "$1" | head -n 4; }
    body() { grep -v '^#' "$1" | grep -E '^ *[0-9]'; } ;;
  megatron)
    src=tests/fixtures/import/real/megatron/megatron_core_r0.8.0_gpt3_7b_8gpu_tflops_skipped_iters_fixstars_mdk.txt
    header() { grep -v 'elapsed time per iteration' "$1" | head -n 40; }
    body() { grep 'elapsed time per iteration' "$1"; } ;;
  imb)
    src=tests/fixtures/import/real/imb/pingpong_imb2021.2_2ranks_azurehpc_lustre_srun_prompts_no_trailing_spaces.txt
    header() { awk '{print} /#bytes/ {exit}' "$1"; }
    body() { awk 'f && /^ *[0-9]/ {print} /#bytes/ {f=1}' "$1"; } ;;
  allreduce)
    src=tests/fixtures/import/real/torch-allreduce/all_reduce_bench_table_4xH100_lambda_environment_header_dudeperf3ct_blog.txt
    header() { awk '{print} /^\| ---/ {exit}' "$1"; }
    body() { grep -E '^\| +[0-9]' "$1"; } ;;
  deepspeed)
    src=tests/fixtures/import/real/torch-allreduce/eleutherai_cookbook_ds_comm_all_reduce_8x_trn2_raw_GBps_two_runs_64B_first_row_outlier_nrt_warnings.txt
    header() { awk '{print} /^-+$/ {exit}' "$1"; }
    body() { grep -E '^[0-9]+ +[0-9]+x[0-9]+ ' "$1"; } ;;
  whole)
    src="${4:?whole needs a FILE}"
    header() { :; }
    body() { cat "$1"; } ;;
  *) echo "unknown kind $kind: nccl, nccl2021, megatron, imb, allreduce, deepspeed or whole FILE" >&2; exit 2 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log="$tmp/big_$kind.log"
# The header, then the result lines again and again.
header "$src" > "$log"
rows=$(body "$src" || true)
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
