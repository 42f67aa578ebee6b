/*
 * test_share.c — pieces of one split candidate that tell each other what they
 * found (CKernel/share.c): pk_job_range, pk_job_limit and pk_cofactor_root,
 * and that limited pieces still merge to the unsplit answer.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkt.h"

/* The union of the factors every piece found so far, as pk_cofactor_root takes it. */
typedef struct found {
    size_t count;
    char *primes[64];
    uint64_t exponents[64];
} found;

static void found_free(found *f)
{
    for (size_t i = 0; i < f->count; i++)
        free(f->primes[i]);
    f->count = 0;
}

static void found_collect(found *f, pk_job *const *pieces, size_t np)
{
    found_free(f);
    for (size_t i = 0; i < np; i++) {
        pk_progress p;
        if (pkt_progress(pieces[i], &p) != PK_OK || p.factors_found == 0)
            continue;
        char **primes = NULL;
        uint64_t *exps = NULL;
        if (pkt_factors_read(pieces[i], p.factors_found, &primes, &exps) != PK_OK)
            continue;
        for (size_t j = 0; j < p.factors_found; j++) {
            size_t k = 0;
            while (k < f->count && strcmp(f->primes[k], primes[j]) != 0)
                k++;
            if (k == f->count && f->count < 64) {
                f->primes[f->count] = strdup(primes[j]);
                f->exponents[f->count++] = exps[j];
            }
        }
        pkt_factors_free(p.factors_found, primes, exps);
    }
}

/* Restores a piece from its own checkpoint (the limit is lost, as documented). */
static pk_job *round_trip(pk_job *job)
{
    return pkt_restore_copy(job, "restore a limited piece", NULL, 0);
}

void test_limited_pieces_merge_to_the_unsplit_answer(void)
{
    unsigned trials = PKT_SIZE(240u, 120u);
    pkt_say("checks: %u candidates (64-bit, 128-bit, GMP-sized) cut into 2..8 pieces stepped in turns, each "
            "limited after every step to the root of the cofactor all pieces' factors leave (the cofactor itself "
            "for a range starting above 2), some restored from checkpoints on the way: pieces end early, and "
            "pk_job_merge equals the unsplit answer",
            trials);
    pkt_rng rng;
    pkt_rng_for(&rng, "share");
    pkt_planted pl;
    pkt_planted_init(&pl);
    unsigned equal = 0, ended_early = 0;
    found f = {0};
    for (unsigned t = 0; t < trials; t++) {
        static const unsigned sizes[][2] = {{30, 64}, {65, 128}, {129, 260}};
        pkt_planted_make(&rng, &pl, sizes[t % 3][0], sizes[t % 3][1], 20);
        uint64_t from = t % 4 == 3 ? pkt_rand_range(&rng, 3, 200) : 2;
        uint64_t B = pkt_rand_range(&rng, from + 100, 1u << 20);
        char *cand = mpz_get_str(NULL, 10, pl.n), fstr[24], bstr[24];
        pkt_u64(from, fstr);
        pkt_u64(B, bstr);
        pkt_answer whole;
        PKT_CHECK_STATUS(pkt_factor(cand, from > 2 ? fstr : NULL, bstr, 0, 0, &whole), PK_OK, "unsplit");
        size_t k = (size_t)pkt_rand_range(&rng, 2, 8), np = 0;
        pk_job *pieces[8] = {0};
        uint64_t length = (B - from + 1) / k, lo = from;
        for (size_t i = 0; i < k; i++) {
            uint64_t hi = i + 1 == k ? B : lo + length - 1;
            char ls[24], hs[24];
            pkt_u64(lo, ls);
            pkt_u64(hi, hs);
            pk_options o;
            pk_options_init(&o);
            o.from = ls;
            o.bound = hs;
            PKT_CHECK_STATUS(pk_job_create(cand, &o, &pieces[np]), PK_OK, "create piece");
            uint64_t rf = 0, rb = 0;
            if (pieces[np]) {
                PKT_CHECK_STATUS(pk_job_range(pieces[np], &rf, &rb), PK_OK, "pk_job_range");
                PKT_CHECK(rf == lo && rb == hi, "range %llu..%llu, want %llu..%llu", (unsigned long long)rf,
                          (unsigned long long)rb, (unsigned long long)lo, (unsigned long long)hi);
                np++;
            }
            lo = hi + 1;
        }
        /* Step in turns; after each step share what was found. */
        int running = 1;
        for (unsigned round = 0; running && round < 1000000; round++) {
            running = 0;
            for (size_t i = 0; i < np; i++) {
                int st = pk_job_step(pieces[i], pkt_rand_range(&rng, 500, 20000));
                PKT_CHECK(st == PK_MORE || st == PK_DONE, "step: %d", st);
                running |= st == PK_MORE;
                found_collect(&f, pieces, np);
                uint64_t root = 0, cof = 0;
                st = pk_cofactor_root(cand, (const char *const *)f.primes, f.exponents, f.count, &root, &cof);
                PKT_CHECK_STATUS(st, PK_OK, "pk_cofactor_root");
                uint64_t limit = from > 2 ? cof : root;
                for (size_t j = 0; j < np; j++)
                    PKT_CHECK_STATUS(pk_job_limit(pieces[j], limit), PK_OK, "pk_job_limit");
                if (pkt_rand_below(&rng, 50) == 0) {
                    pieces[i] = round_trip(pieces[i]);
                    pk_job_limit(pieces[i], limit);
                }
            }
        }
        for (size_t i = 0; i < np; i++) {
            pk_progress p;
            pkt_progress(pieces[i], &p);
            uint64_t rf = 0, rb = 0;
            pk_job_range(pieces[i], &rf, &rb);
            if (p.next_divisor <= rb)
                ended_early++;
        }
        pk_job *merged = NULL;
        PKT_CHECK_STATUS(pk_job_merge(pieces, np, &merged), PK_OK, "merge limited pieces");
        pkt_answer m;
        if (merged && pkt_answer_read(merged, &m) == PK_OK) {
            char why[300], g[600], w[600];
            int eq = pkt_answer_equal(&m, &whole, why, sizeof why);
            if (!eq) {
                pkt_answer_format(&m, g, sizeof g);
                pkt_answer_format(&whole, w, sizeof w);
            }
            PKT_CHECK(eq, "n=%s from %s B=%s k=%zu: %s\n      merged %s\n      whole  %s", cand, fstr, bstr, np, why,
                      g, w);
            equal += (unsigned)eq;
            pkt_answer_free(&m);
        } else {
            PKT_CHECK(0, "no merged answer for n=%s", cand);
        }
        pk_job_destroy(merged);
        for (size_t i = 0; i < np; i++)
            pk_job_destroy(pieces[i]);
        pkt_answer_free(&whole);
        free(cand);
        PKT_BAIL_IF_MANY();
    }
    found_free(&f);
    pkt_planted_clear(&pl);
    PKT_CHECK(ended_early > 0, "no piece ever ended early: the limits were never exercised");
    pkt_say("  %u of %u merged answers equal; %u pieces ended before their bound", equal, trials, ended_early);
}

void test_limit_only_lowers_and_cofactor_root_checks_its_input(void)
{
    pkt_say("checks: a limit below the next divisor ends the job at its next step, a higher limit is ignored, the "
            "range is unchanged; pk_cofactor_root answers the root and the cofactor and refuses bad input");
    const char *n = "1000036000099"; /* 1000003 * 1000033 */
    pk_options o;
    pk_options_init(&o);
    o.from = "1000";
    o.bound = "2000000";
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(n, &o, &job), PK_OK, "create");
    if (!job)
        return;
    PKT_CHECK_STATUS(pk_job_limit(NULL, 5), PK_E_ARG, "pk_job_limit(NULL)");
    PKT_CHECK_STATUS(pk_job_step(job, 1000), PK_MORE, "first step");
    PKT_CHECK_STATUS(pk_job_limit(job, 999), PK_OK, "limit below from");
    PKT_CHECK_STATUS(pk_job_limit(job, 5000000), PK_OK, "a higher limit");
    PKT_CHECK_STATUS(pk_job_step(job, 1000), PK_DONE, "the limited job ends");
    uint64_t from = 0, bound = 0;
    PKT_CHECK_STATUS(pk_job_range(job, &from, &bound), PK_OK, "range");
    PKT_CHECK(from == 1000 && bound == 2000000, "range changed to %llu..%llu", (unsigned long long)from,
              (unsigned long long)bound);
    PKT_CHECK_STATUS(pk_job_range(job, NULL, &bound), PK_E_ARG, "range(NULL)");
    pk_job_destroy(job);

    const char *primes[] = {"1000003"};
    uint64_t one = 1, two = 2, root = 0, cof = 0;
    PKT_CHECK_STATUS(pk_cofactor_root(n, primes, &one, 1, &root, &cof), PK_OK, "root");
    PKT_CHECK(root == 1000 && cof == 1000033, "root %llu cofactor %llu", (unsigned long long)root,
              (unsigned long long)cof);
    PKT_CHECK_STATUS(pk_cofactor_root(n, NULL, NULL, 0, &root, NULL), PK_OK, "no primes");
    PKT_CHECK(root == 1000017, "root of n: %llu", (unsigned long long)root);
    PKT_CHECK_STATUS(pk_cofactor_root("340282366920938463463374607431768211457", NULL, NULL, 0, &root, &cof), PK_OK,
                     "2^128 + 1");
    PKT_CHECK(root == UINT64_MAX && cof == UINT64_MAX, "capped root %llu", (unsigned long long)root);
    PKT_CHECK_STATUS(pk_cofactor_root(n, primes, &two, 1, &root, NULL), PK_E_OPTIONS, "a square that does not divide");
    const char *bad[] = {"01"};
    PKT_CHECK_STATUS(pk_cofactor_root(n, bad, &one, 1, &root, NULL), PK_E_PARSE, "a non-canonical prime");
    PKT_CHECK_STATUS(pk_cofactor_root("12a", NULL, NULL, 0, &root, NULL), PK_E_PARSE, "a bad candidate");
    PKT_CHECK_STATUS(pk_cofactor_root("1", NULL, NULL, 0, &root, NULL), PK_E_RANGE, "candidate 1");
    PKT_CHECK_STATUS(pk_cofactor_root(n, NULL, &one, 1, &root, NULL), PK_E_ARG, "primes NULL");
}
