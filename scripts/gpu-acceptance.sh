#!/usr/bin/env bash
# The GPU acceptance check, as one command on the GPU machine: benchbook's
# GPU preset, a plain CUDA C copy reference, PyTorch's copy and GEMM
# references (interleaved with benchbook's GEMM, round by round), then the
# table of ratios (scripts/gpu_acceptance_table.py) and a few files to copy back.
#
#   scripts/gpu-acceptance.sh BENCHBOOK OUTDIR
#
# BENCHBOOK: the benchbook binary, or a gzipped one (*.gz, unpacked to a temp
# folder). Every step runs under its own `timeout`, its stdout+stderr tee'd to
# OUTDIR/<step>.log; a failed step is reported and the next one runs.
#
# Knobs (environment):
#   BUDGET=300            seconds for `run gpu`'s sweep (its timeout: BUDGET*1.3 + TORCH_SECONDS + 90)
#   TORCH_SECONDS=150     seconds for `run gpu`'s PyTorch pass (its copy_ numbers are reused here)
#   GEMM_BUDGET=30 TORCH_GEMM_DEADLINE=40   each interleaved round's benchbook --budget and PyTorch deadline
#   CUDA_QUICK=           set to 1 for the CUDA C reference's --quick sizes (1M..2G in powers of 4)
#   ROUNDS=3              interleaved GEMM rounds (torch, then benchbook)
#   SHAPES=1024,4096,8192 DTYPES=bf16,fp8 ALGOS=4   the interleaved GEMMs
#   LAYOUTS=, FP8_ACCUM=  passed as --layout / --fp8-accum to `run gemm` when set (e.g. nn,tn / promoted,fast)
#   COPY_TO=DIR           also copy the files to bring back (at most 6) into DIR (e.g. the device tool's $OUT)
# Worst case with the defaults: about 60 + 130 + 450 + 90 + 3*150 s (~20 min); every step
# usually ends well before its timeout (~10 min in all). Lower BUDGET and ROUNDS for less.
set -u

if [ $# -ne 2 ]; then
  sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
BB_IN=$1
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
BUDGET=${BUDGET:-300}
ROUNDS=${ROUNDS:-3}
SHAPES=${SHAPES:-1024,4096,8192}
DTYPES=${DTYPES:-bf16,fp8}
ALGOS=${ALGOS:-4}
LAYOUTS=${LAYOUTS:-}
FP8_ACCUM=${FP8_ACCUM:-}
COPY_TO=${COPY_TO:-}
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
FAILED=()
START=$(date +%s)

# step NAME SECONDS CMD...: run CMD under timeout, output to the terminal and OUTDIR/NAME.log.
step() {
  local name=$1 limit=$2 rc t0=$(date +%s)
  shift 2
  echo "== $name (timeout ${limit} s, at +$(( t0 - START )) s): $*" | tee "$OUT/$name.log"
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$OUT/$name.log"
  rc=${PIPESTATUS[0]}
  local took=$(( $(date +%s) - t0 ))
  if [ "$rc" -ne 0 ]; then
    local why="exit $rc"
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${limit} s"
    FAILED+=("$name: $why (see $name.log)")
    echo "== $name FAILED: $why, after $took s" | tee -a "$OUT/$name.log"
  else
    echo "== $name done in $took s" | tee -a "$OUT/$name.log"
  fi
  return 0
}

clocks() {  # clocks FILE: the GPU's clocks, power and throttle reasons as CSV
  local q=name,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu
  # Newer drivers name the throttle reasons clocks_event_reasons.
  { nvidia-smi --query-gpu=$q,clocks_throttle_reasons.active --format=csv > "$1" 2>/dev/null ||
    nvidia-smi --query-gpu=$q,clocks_event_reasons.active --format=csv > "$1"; } && cat "$1"
}

# The binary: as given, or unpacked from *.gz.
BB=$BB_IN
case "$BB_IN" in
  *.gz)
    BB=$TMP/benchbook
    if ! gunzip -c "$BB_IN" > "$BB" || ! chmod +x "$BB"; then
      echo "cannot unpack $BB_IN" >&2
      FAILED+=("unpack: $BB_IN")
    fi
    ;;
esac
export BB
ARCH=(--archive "$OUT/archive")

# a. The card's state before.
step nvidia-smi 30 nvidia-smi
export -f clocks
step clocks-before 30 bash -c 'clocks "$0"' "$OUT/clocks-before.csv"

# b. What benchbook finds.
step backends 60 "$BB" backends

# c. The plain CUDA C reference: copy engine and the SM-kernel launch sweep.
step cuda-build 120 nvcc -O3 -arch=sm_90 -o "$TMP/cuda_memcpy_reference" "$SCRIPTS/cuda_memcpy_reference.cu"
if [ -x "$TMP/cuda_memcpy_reference" ]; then
  step cuda-memcpy 120 bash -c 'set -o pipefail; "$0" ${2:+--quick} | tee "$1"' "$TMP/cuda_memcpy_reference" \
    "$OUT/cuda_c_memcpy.csv" "${CUDA_QUICK:-}"
else
  FAILED+=("cuda-memcpy: not run, the build made no binary")
fi

# d. benchbook's GPU preset, with its report.
TORCH_SECONDS=${TORCH_SECONDS:-150}
step run-gpu $(( BUDGET * 13 / 10 + TORCH_SECONDS + 90 )) "$BB" "${ARCH[@]}" run gpu --report --reports-dir "$OUT/reports" \
  --budget "$BUDGET" --torch-seconds "$TORCH_SECONDS" --label gpu-acceptance

# e. PyTorch's copy_ (seed 001's method): what `run gpu`'s own PyTorch pass
#    measured, else measured here.
mkdir -p "$OUT/torch"
PASS=$(ls -td "${TMPDIR:-/tmp}"/benchbook-torch-* 2>/dev/null | head -1)
if [ -n "$PASS" ] && [ -f "$PASS/torch_memcpy.json" ]; then
  cp "$PASS"/torch_*.json "$PASS"/torch_reference.log "$OUT/torch/" 2>/dev/null
  echo "== torch-memcpy: taken from run gpu's PyTorch pass ($PASS)"
else
  step torch-memcpy 90 python3 "$SCRIPTS/torch_reference.py" --out "$OUT/torch" --skip-gemm --seconds 0.1 --deadline 60
fi

# f. Interleaved GEMM rounds: torch, then benchbook, on the same shapes.
EXTRA=()
[ -n "$LAYOUTS" ] && EXTRA+=(--layout "$LAYOUTS")
[ -n "$FP8_ACCUM" ] && EXTRA+=(--fp8-accum "$FP8_ACCUM")
for r in $(seq 1 "$ROUNDS"); do
  step "torch-gemm-r$r" 75 python3 "$SCRIPTS/torch_reference.py" --gemm-only --shapes "$SHAPES" --dtypes "$DTYPES" \
    --out "$OUT/torch-r$r" --deadline "${TORCH_GEMM_DEADLINE:-40}" --rounds 5
  step "bb-gemm-r$r" 75 "$BB" -q "${ARCH[@]}" run gemm --backend cuda --gpu-shapes "$SHAPES" --gpu-dtypes "$DTYPES" \
    --gemm-algos "$ALGOS" ${EXTRA[@]+"${EXTRA[@]}"} --budget "${GEMM_BUDGET:-30}" --label "interleaved-$r"
done

# The card's state after.
step clocks-after 30 bash -c 'clocks "$0"' "$OUT/clocks-after.csv"

# g. Each run's statistics as JSON (kept in the bundle), then the table.
mkdir -p "$OUT/show"
dump_show() {
  "$BB" --archive "$1/archive" list --json > "$1/show/list.json" || return 1
  local id rc=0
  for id in $(python3 -c 'import json,sys; print(" ".join(r["run_id"] for r in json.load(open(sys.argv[1])) if r.get("status") != "damaged"))' "$1/show/list.json"); do
    "$BB" --archive "$1/archive" show "$id" --json > "$1/show/$id.json" || { echo "show $id failed"; rc=1; }
  done
  return $rc
}
export -f dump_show
step show-json 120 bash -c 'dump_show "$0"' "$OUT"
step table 120 python3 "$SCRIPTS/gpu_acceptance_table.py" "$OUT"

# h. At most 6 files to bring back: the table, the clocks, and two archives.
echo "== steps that failed: ${#FAILED[@]}" | tee "$OUT/failed.txt"
for f in ${FAILED[@]+"${FAILED[@]}"}; do echo "  $f"; done | tee -a "$OUT/failed.txt"
cd "$OUT" || exit 1
DATA=()
for p in archive show torch torch-r* cuda_c_memcpy.csv clocks-*.csv ./*.log failed.txt acceptance.md; do
  [ -e "$p" ] && DATA+=("$p")
done
tar -czf bundle.tar.gz "${DATA[@]}" || echo "tar of the data failed"
[ -d reports ] && { tar -czf reports.tar.gz reports || echo "tar of the reports failed"; }
BACK=()
for f in acceptance.md bundle.tar.gz reports.tar.gz clocks-before.csv clocks-after.csv failed.txt; do
  [ -f "$f" ] || continue
  BACK+=("$f")
  [ "$(stat -c %s "$f")" -gt $(( 16 * 1024 * 1024 )) ] && echo "warning: $f is over 16 MiB"
done
if [ -n "$COPY_TO" ]; then
  mkdir -p "$COPY_TO" && cp "${BACK[@]}" "$COPY_TO"/ && echo "copied ${BACK[*]} to $COPY_TO"
fi
ls -la "${BACK[@]}"
echo "== all done in $(( $(date +%s) - START )) s; ${#FAILED[@]} step(s) failed"
[ ${#FAILED[@]} -eq 0 ]
