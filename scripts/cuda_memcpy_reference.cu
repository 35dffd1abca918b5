// A plain CUDA reference for copy bandwidth, nvbandwidth-style, on one GPU.
//
//  * Copy engine: cudaMemcpyAsync on one stream timed with events, the median
//    of 5 loops of about 50 ms each (the method of the first H200 runs'
//    reference/cuda_c_memcpy_reference.cu): device-to-device, and h2d/d2h
//    pinned (cudaMallocHost) and pageable (malloc).
//  * SM kernel: a device-to-device copy kernel with 16-byte (uint4) accesses,
//    each thread loading U of them before it stores any, grid = SMs x B
//    blocks, swept over U in {1,2,4,8}, B in {1,2,4,8,16} and 256/512/1024
//    threads per block at 256 MiB and 1 GiB (capped by the max size): which
//    launch shape reaches the copy engine's bandwidth. Every configuration's
//    copy is checked once at 4096 spread positions before it is timed.
//
// CSV on stdout: test,bytes,seconds,GBps_once,GBps_rw (GB/s = 1e9 B/s;
// "once" counts the bytes copied, "rw" read + written, d2d only). SM rows
// are named d2d_sm_u{U}_b{B}x{threads}. Lines starting with # are comments.
//
// Build and run:
//   nvcc -O3 -arch=sm_90 -o cuda_memcpy_reference scripts/cuda_memcpy_reference.cu
//   ./cuda_memcpy_reference [MAX_SIZE, e.g. 2G (default) or bytes] [--quick]
// --quick: d2d sizes 1M..MAX in powers of 4 (1M, 4M, ..., 1G for 2G), h2d/d2h the same up to 1G.
// --host-only: the h2d/d2h copies alone (no device-to-device copies, no SM-kernel sweep).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)

// Median seconds per call of op(stream): 3 warm-ups, one timed call to size
// the loop to ~50 ms, then 5 timed loops.
template <typename Op>
static double time_op(Op op, cudaStream_t s) {
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  for (int i = 0; i < 3; i++) op(s);
  CK(cudaStreamSynchronize(s));
  CK(cudaEventRecord(a, s)); op(s); CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b)); float ms1; CK(cudaEventElapsedTime(&ms1, a, b));
  long n = std::max(1L, std::min(100000L, (long)(50.0 / std::max(ms1, 1e-4f))));
  std::vector<double> t;
  for (int r = 0; r < 5; r++) {
    CK(cudaEventRecord(a, s));
    for (long i = 0; i < n; i++) op(s);
    CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b));
    float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1e-3 / n);
  }
  std::sort(t.begin(), t.end());
  CK(cudaEventDestroy(a)); CK(cudaEventDestroy(b));
  return t[2];
}

static double time_copy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  return time_op([&](cudaStream_t st) { CK(cudaMemcpyAsync(dst, src, bytes, kind, st)); }, s);
}

// Thread t of a block copies elements base + u*blockDim.x (u < U) of each
// chunk of blockDim.x*U, so each of the U loads is coalesced across the warp;
// all U loads are issued before the first store. Grid-stride over chunks.
template <int U>
__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t n) {
  const size_t stride = (size_t)gridDim.x * blockDim.x * U;
  for (size_t base = (size_t)blockIdx.x * blockDim.x * U + threadIdx.x; base < n; base += stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
      size_t i = base + (size_t)u * blockDim.x;
      if (i < n) v[u] = src[i];
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      size_t i = base + (size_t)u * blockDim.x;
      if (i < n) dst[i] = v[u];
    }
  }
}

__host__ __device__ static unsigned pattern(size_t word) { return (unsigned)(word * 2654435761u) ^ (unsigned)(word >> 32) ^ 0x5bd1e995u; }

__global__ void fill_pattern(unsigned* p, size_t words) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) p[i] = pattern(i);
}

// Count mismatches at `samples` positions spread over [0, words), both ends included.
__global__ void check_pattern(const unsigned* p, size_t words, int samples, int* bad) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= samples) return;
  size_t i = samples > 1 ? (size_t)((double)j * (double)(words - 1) / (samples - 1)) : 0;
  if (p[i] != pattern(i)) atomicAdd(bad, 1);
}

typedef void (*Launch)(const uint4*, uint4*, size_t, int, int, cudaStream_t);
template <int U>
static void launch(const uint4* s, uint4* d, size_t n, int grid, int threads, cudaStream_t st) {
  copy_kernel<U><<<grid, threads, 0, st>>>(s, d, n);
}

static size_t parse_size(const char* t) {
  char* end; double v = strtod(t, &end);
  switch (*end) { case 'K': case 'k': v *= 1 << 10; break; case 'M': case 'm': v *= 1 << 20; break;
                  case 'G': case 'g': v *= 1 << 30; break; default: break; }
  return (size_t)v;
}

int main(int argc, char** argv) {
  size_t maxb = (size_t)1 << 31;
  bool quick = false, host_only = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = true;
    else if (!strcmp(argv[i], "--host-only")) host_only = true;
    else if (argv[i][0] >= '0' && argv[i][0] <= '9') maxb = parse_size(argv[i]);
    else { fprintf(stderr, "usage: %s [MAX_SIZE, e.g. 2G] [--quick] [--host-only]\n", argv[0]); return 2; }
  }
  if (maxb < 4096) { fprintf(stderr, "max size must be at least 4K\n"); return 2; }
  const size_t first = quick ? (size_t)1 << 20 : 4096, step = quick ? 4 : 2;
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("# device %s, %d SMs, L2 %d B, max size %zu%s\n", p.name, p.multiProcessorCount, p.l2CacheSize, maxb,
         quick ? ", --quick" : "");
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void *da, *db; CK(cudaMalloc(&da, maxb)); CK(cudaMalloc(&db, maxb));
  CK(cudaMemset(da, 1, maxb)); CK(cudaMemset(db, 2, maxb));
  printf("test,bytes,seconds,GBps_once,GBps_rw\n");
  double ce_at[64] = {0};  // copy-engine seconds by log2(bytes), for the SM summary
  for (size_t b = first; b <= maxb && !host_only; b *= step) {
    double t = time_copy(db, da, b, cudaMemcpyDeviceToDevice, s);
    int lg = 0; while (((size_t)1 << lg) < b) lg++;
    ce_at[lg] = t;
    printf("d2d_ce,%zu,%.9g,%.2f,%.2f\n", b, t, b / t / 1e9, 2 * b / t / 1e9);
    fflush(stdout);
  }

  size_t hmax = std::min(maxb, (size_t)1 << 30);
  void *hp; CK(cudaMallocHost(&hp, hmax)); memset(hp, 3, hmax);
  void *hu = malloc(hmax); memset(hu, 4, hmax);
  for (size_t b = first; b <= hmax; b *= 4) {
    double t1 = time_copy(da, hp, b, cudaMemcpyHostToDevice, s);
    double t2 = time_copy(hp, da, b, cudaMemcpyDeviceToHost, s);
    double t3 = time_copy(da, hu, b, cudaMemcpyHostToDevice, s);
    double t4 = time_copy(hu, da, b, cudaMemcpyDeviceToHost, s);
    printf("h2d_pinned,%zu,%.9g,%.2f,\n", b, t1, b / t1 / 1e9);
    printf("d2h_pinned,%zu,%.9g,%.2f,\n", b, t2, b / t2 / 1e9);
    printf("h2d_pageable,%zu,%.9g,%.2f,\n", b, t3, b / t3 / 1e9);
    printf("d2h_pageable,%zu,%.9g,%.2f,\n", b, t4, b / t4 / 1e9);
    fflush(stdout);
  }
  CK(cudaFreeHost(hp)); free(hu);

  // SM-kernel copies: the launch-shape sweep.
  const int us[] = {1, 2, 4, 8}, per_sm[] = {1, 2, 4, 8, 16}, threads_of[] = {256, 512, 1024};
  const Launch launches[] = {launch<1>, launch<2>, launch<4>, launch<8>};
  int* bad; CK(cudaMalloc(&bad, sizeof(int)));
  std::vector<size_t> sm_sizes;
  for (size_t b : {(size_t)256 << 20, (size_t)1 << 30}) if (b <= maxb) sm_sizes.push_back(b);
  if (sm_sizes.empty()) sm_sizes.push_back(maxb & ~(size_t)15);
  if (host_only) sm_sizes.clear();
  for (size_t b : sm_sizes) {
    const size_t n = b / sizeof(uint4), words = b / sizeof(unsigned);
    fill_pattern<<<p.multiProcessorCount * 8, 256, 0, s>>>((unsigned*)da, words);
    CK(cudaGetLastError());
    double best = 1e30; std::string best_name;
    for (int ui = 0; ui < 4; ui++)
      for (int bpsm : per_sm)
        for (int threads : threads_of) {
          const int grid = p.multiProcessorCount * bpsm;
          char name[64]; snprintf(name, sizeof name, "d2d_sm_u%d_b%dx%d", us[ui], bpsm, threads);
          // Check this configuration's copy once before timing it.
          CK(cudaMemsetAsync(db, 0, b, s)); CK(cudaMemsetAsync(bad, 0, sizeof(int), s));
          launches[ui]((const uint4*)da, (uint4*)db, n, grid, threads, s);
          CK(cudaGetLastError());
          check_pattern<<<16, 256, 0, s>>>((const unsigned*)db, words, 4096, bad);
          int h_bad = 0; CK(cudaMemcpyAsync(&h_bad, bad, sizeof(int), cudaMemcpyDeviceToHost, s));
          CK(cudaStreamSynchronize(s));
          if (h_bad) { printf("# %s at %zu B: %d of 4096 checked words wrong; not timed\n", name, b, h_bad); continue; }
          double t = time_op([&](cudaStream_t st) { launches[ui]((const uint4*)da, (uint4*)db, n, grid, threads, st); }, s);
          CK(cudaGetLastError());
          printf("%s,%zu,%.9g,%.2f,%.2f\n", name, b, t, b / t / 1e9, 2 * b / t / 1e9);
          fflush(stdout);
          if (t < best) { best = t; best_name = name; }
        }
    int lg = 0; while (((size_t)1 << lg) < b) lg++;
    double ce = ce_at[lg];
    if (best < 1e30 && ce > 0)
      printf("# best SM kernel at %zu B: %s, %.2f GB/s copied once, %.3f of the copy engine\n", b,
             best_name.c_str(), b / best / 1e9, ce / best);
    else if (best < 1e30)
      printf("# best SM kernel at %zu B: %s, %.2f GB/s copied once\n", b, best_name.c_str(), b / best / 1e9);
    fflush(stdout);
  }
  CK(cudaFree(bad)); CK(cudaFree(da)); CK(cudaFree(db));
  return 0;
}
