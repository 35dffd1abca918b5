#!/usr/bin/env bash
# The telemetry checks on a GPU machine, after scripts/gpu-acceptance.sh:
#   1. the sampler's overhead, in one run: copies (256 MiB, 2 GiB, copy
#      engine) and bf16 GEMMs (4096³, 8192³), 10 rounds each, alternating
#      the sampler on and paused (--telemetry-ab; scripts/telemetry_overhead.py
#      compares the halves);
#   2. `run exec` of the GPT training script with its GPUs sampled: GPU
#      energy per repetition and tokens/J per model.
#
#   scripts/gpu-telemetry.sh BENCHBOOK OUTDIR
#
# BENCHBOOK: the binary, or a gzipped one. Runs go to OUTDIR/archive; every
# step's output to OUTDIR/<step>.log. Knobs: BUDGET=40 (seconds for the
# overhead run), SIZES=small,medium,large (models), TRAIN_DEADLINE=60, TRAIN=0
# (skip the training run).
set -u
if [ $# -ne 2 ]; then sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
BB=$1
mkdir -p "$2" || exit 2
OUT=$(cd "$2" && pwd)
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
BUDGET=${BUDGET:-40}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
case "$BB" in
  *.gz) gunzip -c "$BB" > "$TMP/benchbook" && chmod +x "$TMP/benchbook" && BB=$TMP/benchbook ;;
esac
FAILED=0
step() {
  local name=$1 limit=$2
  shift 2
  echo "== $name (timeout $limit s): $*" | tee "$OUT/$name.log"
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$OUT/$name.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "== $name FAILED (exit $rc)" | tee -a "$OUT/$name.log"; FAILED=$((FAILED + 1)); }
}
ARCH=(--archive "$OUT/archive")
step telemetry-ab $((BUDGET * 2 + 30)) "$BB" "${ARCH[@]}" run memcpy gemm --backend cuda --sizes 256M,2G \
  --copy-methods copy_engine --cache warm --gpu-shapes 4096,8192 --gpu-dtypes bf16 --rounds 10 --target-ci 0.0001 \
  --budget "$BUDGET" --telemetry-ab -q --label telemetry-ab
[ "${TRAIN:-1}" = 0 ] || step train-exec $(( ${TRAIN_DEADLINE:-60} + 60 )) "$BB" "${ARCH[@]}" run exec -q --label train-energy -- \
  python3 "$SCRIPTS/train_gpt.py" --preset seed002 --sizes "${SIZES:-small,medium,large}" --deadline "${TRAIN_DEADLINE:-60}"
echo "== telemetry checks: $FAILED step(s) failed"
[ "$FAILED" -eq 0 ]
