/*
 * trial/dispatch.c — the scans a job uses, chosen at run time: the best
 * implementation the CPU and the build support at or below the request
 * (scan.c, scan_avx2.c, scan_avx512.c give identical answers).
 */
#include "trial/trial.h"

/* The best path at or below `limit` that this CPU and build can run. */
static int simd_best(int limit)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (limit >= PK_SIMD_AVX512 && __builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq"))
        return PK_SIMD_AVX512;
    if (limit >= PK_SIMD_AVX2 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        return PK_SIMD_AVX2;
#endif
    (void)limit;
    return PK_SIMD_PORTABLE;
}

int pk_simd_active(int requested)
{
    if (requested < PK_SIMD_AUTO || requested > PK_SIMD_AVX512)
        return PK_E_OPTIONS;
    return simd_best(requested == PK_SIMD_AUTO ? PK_SIMD_AVX512 : requested);
}

void pk_dispatch_select(int requested, pk_dispatch *out)
{
    int simd = pk_simd_active(requested);
    out->simd = PK_SIMD_PORTABLE;
    out->scan64 = pk_scan64_portable;
    out->scan128 = pk_scan128_portable;
#if defined(__x86_64__)
    if (simd == PK_SIMD_AVX512) {
        out->simd = simd;
        out->scan64 = pk_scan64_avx512;
        out->scan128 = pk_scan128_avx512;
    } else if (simd == PK_SIMD_AVX2) {
        out->simd = simd;
        out->scan64 = pk_scan64_avx2;
        out->scan128 = pk_scan128_avx2;
    }
#else
    (void)simd;
#endif
}
