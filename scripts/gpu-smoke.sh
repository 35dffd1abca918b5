#!/usr/bin/env bash
# A short first look on a GPU machine (about 2.5 minutes), before
# scripts/gpu-acceptance.sh: does each GEMM path plan, run and validate,
# how far each layout is from PyTorch, and which launch shape of a plain
# CUDA C copy kernel reaches the copy engine. Usage:
#   scripts/gpu-smoke.sh BENCHBOOK[.gz] OUTDIR
set -u
BB_IN=$1 OUT=$2
SCRIPTS=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
TMP=$(mktemp -d)
BB=$BB_IN
case "$BB_IN" in *.gz) BB=$TMP/benchbook; gunzip -c "$BB_IN" > "$BB" && chmod +x "$BB" ;; esac
A=(--archive "$OUT/archive")
t() { local s=$1; shift; echo "== $* (timeout $s s)"; timeout -k 5 "$s" "$@"; echo "== exit $?"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
t 60 "$BB" backends
t 70 "$BB" -q "${A[@]}" run gemm --backend cuda --gpu-shapes 1024,4096,8192 --gpu-dtypes f32,tf32,f16,bf16,fp8 \
  --layout nn,tn --fp8-accum promoted,fast --gemm-algos 4 --budget 35 --label smoke-gemm
t 30 "$BB" -q "${A[@]}" run memcpy --backend cuda --sizes 256M,1G --copy-methods copy_engine,sm_kernel --budget 12 \
  --label smoke-copy
for r in $(ls "$OUT/archive/runs"); do t 30 "$BB" "${A[@]}" show "$r"; done
t 60 nvcc -O3 -arch=sm_90 -o "$TMP/ref" "$SCRIPTS/cuda_memcpy_reference.cu" && t 60 "$TMP/ref" 1G --quick | tee "$OUT/sm_sweep.csv"
t 45 python3 "$SCRIPTS/torch_reference.py" --gemm-only --shapes 1024,4096,8192 --dtypes bf16,fp8 --fp8-fast-accum \
  --out "$OUT/torch" --deadline 35 --rounds 5
(cd "$OUT" && tar czf smoke.tar.gz archive torch sm_sweep.csv 2>/dev/null)
