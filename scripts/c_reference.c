/* A plain-C reference for benchbook's CPU memcpy and STREAM numbers.
 *
 *   c_reference memcpy BYTES THREADS
 *   c_reference copy|scale|add|triad ARRAY_BYTES THREADS
 *
 * Prints one line: "<op> <bytes> <threads> <median GB/s moved>", counting
 * bytes as benchbook does (memcpy 2x size; STREAM weights 2,2,3,3). Each
 * thread works on its own contiguous chunk, as in benchbook; samples are
 * batched to >= 1 ms, 0.2 s of warm-up, median of 31 samples.
 * Build: gcc -O3 -march=native -fopenmp c_reference.c -o c_reference
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static char *src8, *dst8;
static double *restrict a, *restrict b, *restrict c;
static size_t len;
static int op; /* 0 memcpy, 1 copy, 2 scale, 3 add, 4 triad */

static void run(long iters) {
#pragma omp parallel
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        size_t per = (len + n - 1) / n, lo = per * t, hi = lo + per > len ? len : lo + per;
        if (lo > len) lo = len;
        for (long i = 0; i < iters; i++) {
            /* One plain loop per kernel, so gcc vectorizes each. */
            switch (op) {
            case 0: memcpy(dst8 + lo, src8 + lo, hi - lo); break;
            case 1: for (size_t j = lo; j < hi; j++) c[j] = a[j]; break;
            case 2: for (size_t j = lo; j < hi; j++) b[j] = 0.4 * c[j]; break;
            case 3: for (size_t j = lo; j < hi; j++) c[j] = a[j] + b[j]; break;
            default: for (size_t j = lo; j < hi; j++) a[j] = b[j] + 0.4 * c[j]; break;
            }
            __asm__ __volatile__("" ::: "memory");
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s memcpy|copy|scale|add|triad BYTES THREADS\n", argv[0]);
        return 2;
    }
    const char *names[] = {"memcpy", "copy", "scale", "add", "triad"};
    const double weight[] = {2, 2, 2, 3, 3};
    op = -1;
    for (int i = 0; i < 5; i++)
        if (!strcmp(argv[1], names[i])) op = i;
    if (op < 0) { fprintf(stderr, "unknown op %s\n", argv[1]); return 2; }
    size_t bytes = strtoull(argv[2], 0, 10);
    omp_set_num_threads(atoi(argv[3]));
    if (op == 0) {
        len = bytes;
        /* Same placement as benchbook: source page-aligned, destination
         * 2 KiB past a page boundary (never 4 KiB-aliased). */
        if (posix_memalign((void **)&src8, 4096, len) || posix_memalign((void **)&dst8, 4096, len + 2048)) return 1;
        dst8 += 2048;
        for (size_t i = 0; i < len; i++) { src8[i] = (char)(i * 31); dst8[i] = 0; }
    } else {
        len = bytes / 8;
        double *p[3];
        for (int i = 0; i < 3; i++) {
            if (posix_memalign((void **)&p[i], 4096, len * 8 + 4096)) return 1;
            p[i] += i * 128; /* 0, 1, 2 KiB past the page, as benchbook */
        }
        a = p[0]; b = p[1]; c = p[2];
        for (size_t i = 0; i < len; i++) { a[i] = 0.1; b[i] = 0.2; c[i] = 0.0; }
    }
    long iters = 1;
    double t0 = now(), dt = 0;
    while (now() - t0 < 0.2) {
        double s = now(); run(iters); dt = now() - s;
        if (dt < 1e-3) iters *= 2;
    }
    iters = (long)(iters * (1e-3 / (dt > 0 ? dt : 1e-9))) + 1;
    double samples[31];
    for (int i = 0; i < 31; i++) {
        double s = now(); run(iters);
        samples[i] = (now() - s) / iters;
    }
    qsort(samples, 31, sizeof(double), cmp);
    printf("%s %zu %s %.3f\n", names[op], bytes, argv[3], weight[op] * bytes / samples[15] / 1e9);
    return 0;
}
