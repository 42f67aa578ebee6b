/*
 * test_simd.c — every divisibility-test implementation the CPU can run gives
 * the same answers.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_simd_active_reports_what_the_cpu_runs(void)
{
    int avx2 = 0, avx512 = 0;
#if defined(__x86_64__)
    __builtin_cpu_init();
    avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
    pkt_say("checks: pk_simd_active agrees with __builtin_cpu_supports (this CPU: avx2+fma %s, avx512f+dq %s), "
            "falls back AVX-512 -> AVX2 -> portable, and rejects values that are not a pk_simd",
            avx2 ? "yes" : "no", avx512 ? "yes" : "no");
    int best = avx512 ? PK_SIMD_AVX512 : avx2 ? PK_SIMD_AVX2 : PK_SIMD_PORTABLE;
    int below512 = avx2 ? PK_SIMD_AVX2 : PK_SIMD_PORTABLE;
    PKT_CHECK(pk_simd_active(PK_SIMD_PORTABLE) == PK_SIMD_PORTABLE, "portable -> %d", pk_simd_active(PK_SIMD_PORTABLE));
    PKT_CHECK(pk_simd_active(PK_SIMD_AVX2) == (avx2 ? PK_SIMD_AVX2 : PK_SIMD_PORTABLE), "avx2 -> %d",
              pk_simd_active(PK_SIMD_AVX2));
    PKT_CHECK(pk_simd_active(PK_SIMD_AVX512) == (avx512 ? PK_SIMD_AVX512 : below512), "avx512 -> %d",
              pk_simd_active(PK_SIMD_AVX512));
    PKT_CHECK(pk_simd_active(PK_SIMD_AUTO) == best, "auto -> %d, want %d", pk_simd_active(PK_SIMD_AUTO), best);
    PKT_CHECK_STATUS(pk_simd_active(4), PK_E_OPTIONS, "pk_simd_active(4)");
    PKT_CHECK_STATUS(pk_simd_active(-1), PK_E_OPTIONS, "pk_simd_active(-1)");
}

void test_simd_paths_agree_on_random_inputs(void)
{
    int paths[4], np = 0;
    const char *names[4];
    paths[np] = PK_SIMD_PORTABLE, names[np++] = "portable";
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        paths[np] = PK_SIMD_AVX2, names[np++] = "avx2";
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq"))
        paths[np] = PK_SIMD_AVX512, names[np++] = "avx512";
#endif
    paths[np] = PK_SIMD_AUTO, names[np++] = "auto";
    unsigned count = PKT_SIZE(3000u, 1500u);
    pkt_say("checks: %u random candidates (64-bit and 65..128-bit; divisors both below 2^20 and in ranges "
            "starting at 2^20..2^32) give the same answer, equal to the GMP oracle, on each path this CPU runs:",
            count);
    for (int i = 0; i < np; i++) pkt_say("  %s", names[i]);

    pkt_rng rng;
    pkt_rng_for(&rng, "simd");
    mpz_t n, h[4];
    mpz_init(n);
    for (int i = 0; i < 4; i++) mpz_init(h[i]);
    unsigned agreed = 0;
    for (unsigned t = 0; t < count; t++) {
        int wide = t & 1; /* 65..128-bit candidates on odd trials */
        uint64_t from = 2, bound;
        size_t nh = 0;
        if (pkt_rand_below(&rng, 2)) {
            /* Divisors in a window above 2^20, where the vector paths work. */
            from = pkt_rand_range(&rng, (uint64_t)1 << 20, (uint64_t)1 << 32);
            bound = from + pkt_rand_range(&rng, 1u << 12, 1u << 17);
            mpz_set_ui(n, 1);
            unsigned k = (unsigned)pkt_rand_range(&rng, 0, 2);
            for (unsigned i = 0; i < k; i++) {
                /* A prime inside the window. */
                mpz_set_ui(h[nh], pkt_rand_range(&rng, from, bound));
                mpz_nextprime(h[nh], h[nh]);
                if (mpz_cmp_ui(h[nh], bound) > 0) continue;
                mpz_mul(n, n, h[nh]);
                if (pkt_rand_below(&rng, 4) == 0) mpz_mul(n, n, h[nh]);
                nh++;
            }
            /* A tail of primes above the window keeps every factor >= from. */
            unsigned have = mpz_cmp_ui(n, 1) ? (unsigned)mpz_sizeinbase(n, 2) : 0;
            unsigned target = wide ? (unsigned)pkt_rand_range(&rng, 65, 128) : (unsigned)pkt_rand_range(&rng, 40, 64);
            while (have + 34 < target) {
                pkt_rand_prime(&rng, h[3], 34); /* > 2^33 > bound */
                mpz_mul(n, n, h[3]);
                have = (unsigned)mpz_sizeinbase(n, 2);
            }
            if (mpz_cmp_ui(n, 1) == 0 || mpz_sizeinbase(n, 2) > (wide ? 128u : 64u)) {
                t--;
                continue;
            }
        } else {
            pkt_planted pl;
            pkt_planted_init(&pl);
            pkt_planted_make(&rng, &pl, wide ? 65 : 20, wide ? 128 : 64, 20);
            mpz_set(n, pl.n);
            pkt_planted_clear(&pl);
            bound = pkt_rand_range(&rng, 2, 1u << 18);
        }
        char *cand = mpz_get_str(NULL, 10, n), fs[24], bs[24];
        pkt_u64(from, fs);
        pkt_u64(bound, bs);
        pkt_answer want, got[4];
        pkt_oracle_range(n, from, bound, 0, (const mpz_t *)h, nh, &want, NULL);
        int all_equal = 1;
        for (int p = 0; p < np; p++) {
            pk_options o;
            pk_options_init(&o);
            o.simd = paths[p];
            o.from = fs;
            o.bound = bs;
            pk_job *job = NULL;
            pkt_answer_init(&got[p]);
            int st = pk_job_create(cand, &o, &job);
            PKT_CHECK_STATUS(st, PK_OK, names[p]);
            if (st != PK_OK) {
                all_equal = 0;
                continue;
            }
            st = pk_job_step(job, UINT64_MAX);
            PKT_CHECK_STATUS(st, PK_DONE, names[p]);
            if (st == PK_DONE && pkt_answer_read(job, &got[p]) == PK_OK) {
                char why[300], g[600], w[600];
                int eq = pkt_answer_equal(&got[p], &want, why, sizeof why);
                if (!eq) {
                    pkt_answer_format(&got[p], g, sizeof g);
                    pkt_answer_format(&want, w, sizeof w);
                    PKT_CHECK(0, "%s: n=%s [%s, %s]: %s\n      got  %s\n      want %s", names[p], cand, fs, bs, why,
                              g, w);
                }
                all_equal &= eq;
                if (p > 0 && got[0].cofactor) {
                    eq = pkt_answer_equal(&got[p], &got[0], why, sizeof why);
                    PKT_CHECK(eq, "%s vs portable: n=%s [%s, %s]: %s", names[p], cand, fs, bs, why);
                    all_equal &= eq;
                }
            } else {
                all_equal = 0;
            }
            pk_job_destroy(job);
        }
        agreed += (unsigned)all_equal;
        for (int p = 0; p < np; p++) pkt_answer_free(&got[p]);
        pkt_answer_free(&want);
        free(cand);
        PKT_BAIL_IF_MANY();
    }
    pkt_say("%u of %u candidates agree on all %d paths", agreed, count, np);
    mpz_clear(n);
    for (int i = 0; i < 4; i++) mpz_clear(h[i]);
}
