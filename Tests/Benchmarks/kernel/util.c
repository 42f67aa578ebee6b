/* util.c — clocks, statistics, a seeded generator and loud failure. */
#include "bench.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

double bench_thread_cpu(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void bench_sleep_ns(uint64_t ns)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ns / UINT64_C(1000000000));
    ts.tv_nsec = (long)(ns % UINT64_C(1000000000));
    while (nanosleep(&ts, &ts) != 0) {
        /* interrupted by a signal: sleep the rest */
    }
}

void bench_die(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "\npk-bench: FATAL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\npk-bench: the benchmark is aborted; no figures are valid.\n");
    exit(2);
}

void bench_note(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "  ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

void *bench_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        bench_die("out of memory (%zu bytes)", n);
    return p;
}

uint64_t bench_rng(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *sorted_copy(const double *v, size_t n)
{
    double *c = bench_xmalloc(n * sizeof *c);
    memcpy(c, v, n * sizeof *c);
    qsort(c, n, sizeof *c, cmp_double);
    return c;
}

double bench_median(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double *c = sorted_copy(v, n);
    double m = (n % 2) ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

double bench_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double *c = sorted_copy(v, n);
    size_t rank = (size_t)ceil(q * (double)n);   /* 1-based */
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    double r = c[rank - 1];
    free(c);
    return r;
}

double bench_min(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] < m)
            m = v[i];
    return m;
}

double bench_max(const double *v, size_t n)
{
    double m = NAN;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] > m)
            m = v[i];
    return m;
}

const char *bench_simd_name(int simd)
{
    switch (simd) {
    case PK_SIMD_AUTO: return "auto";
    case PK_SIMD_PORTABLE: return "portable";
    case PK_SIMD_AVX2: return "avx2";
    case PK_SIMD_AVX512: return "avx512";
    default: return "?";
    }
}

const char *bench_path_name(int path)
{
    switch (path) {
    case PK_PATH_U64: return "u64";
    case PK_PATH_U128: return "u128";
    case PK_PATH_GMP: return "gmp";
    default: return "?";
    }
}
