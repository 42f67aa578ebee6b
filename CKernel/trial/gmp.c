/*
 * trial/gmp.c — trial division of a cofactor above 128 bits.
 *
 * Divisors are the primes of a segmented sieve (sieve.c), one segment of
 * PK_SIEVE_SPAN integers at a time. Two strategies, chosen by the size of the
 * cofactor:
 *
 * Word products (cofactors below PK_WINDOW_MIN_LIMBS limbs). Primes are packed
 * into word-size products (two to four primes per 64-bit word) and the
 * cofactor is read once per product with mpn_mod_1; the word remainder tells
 * which of its primes divide. Products are taken in groups of about
 * PK_GROUP_LIMB_OPS limb operations; the interrupt flag and the budget are
 * checked between groups, and every group boundary is a resume point.
 *
 * Windows (larger cofactors). The primes of a window of segments are
 * multiplied together — a product tree per segment, and the segments paired
 * into the nodes of a tree aligned on segment numbers, so that a pk_cache can
 * keep and share every node — until the product P has about
 * PK_WINDOW_FACTOR times as many bits as the cofactor. Then the window check:
 * r = P mod cof (node by node) and g = gcd(r, cof) test every prime of the
 * window at once: g is the product of those dividing the cofactor, and is
 * split by testing the window's primes against g in order until it is 1,
 * which is quick because g is small. The cofactor is read a handful of times per window
 * instead of once per word of primes.
 *
 * All window work runs in stints (bounded.c) with a poll of the interrupt flag
 * before each: a level of a segment's product tree, a pairing product, and in
 * the window check the cofactor's reciprocal and folding constant, each
 * node's folding and Barrett blocks, its product with the residue so far, and
 * the gcd's steps. No stint multiplies operands above cap_limbs() limbs.
 *
 * Resume points: every segment boundary. In memory the window's nodes, a
 * segment product and a window check under way stay on the job and continue
 * where they stopped; a checkpoint records the window's range and the residue
 * of its product modulo the cofactor (the residue so far times the nodes not
 * yet folded; one reduction, done when the checkpoint is written), which a
 * restore takes as the window's first node.
 */
#include <stdlib.h>

#include "trial/trial.h"

#define PK_GROUP_LIMB_OPS (UINT64_C(1) << 17)
#ifndef PK_WINDOW_MIN_LIMBS
#define PK_WINDOW_MIN_LIMBS 192u  /* windows at or above this cofactor size */
#endif
#define PK_WINDOW_FACTOR 48u      /* window product bits per cofactor bit */
/* A window does a prime's work in a fraction of a word-product read: its
   units are scaled so that a unit costs about the same time on both. */
#define PK_WINDOW_UNIT_DIVISOR 8u
/* Operands of the multiplications of window work, in limbs: 4/5 of the
   cofactor's size, clamped to [PK_CAP_MIN_LIMBS, PK_CAP_MAX_LIMBS]
   (docs/kernel.md has the measurements). */
#define PK_CAP_NUM 4u
#define PK_CAP_DEN 5u
#define PK_CAP_MIN_LIMBS 4096u
#define PK_CAP_MAX_LIMBS 16384u
/* With a cache, nodes larger than a stint are paired (by Karatsuba over
   stints) up to operands of PK_PAIR_CAPS stints and PK_PAIR_MAX_LIMBS. */
#define PK_PAIR_CAPS 6u
#define PK_PAIR_MAX_LIMBS 32768u

static void free_window_check(pk_job *job);

void pk_tdgmp_release(pk_job *job)
{
    free(job->primes);
    job->primes = NULL;
    job->prime_count = job->prime_pos = 0;
    job->primes_lo = job->primes_hi = 0;
    pk_sieve_free(&job->sieve);
    for (size_t i = 0; i < job->tree_cap; i++)
        mpz_clear(job->tree[i]);
    job->win_open = 0;
    job->win_depth = 0;
    job->win_tested = job->win_work = job->win_bits = 0;
    free(job->tree);
    job->tree = NULL;
    job->tree_cap = 0;
    job->rp_active = 0;
    free_window_check(job);
    if (job->ws) {
        for (unsigned i = 0; i < 64; i++)
            mpz_clear(job->ws->node[i]);
        free(job->ws);
        job->ws = NULL;
    }
}

static int ensure_window_stack(pk_job *job)
{
    if (job->ws)
        return PK_OK;
    pk_window_stack *ws = malloc(sizeof *ws);
    if (!ws)
        return PK_E_NOMEM;
    for (unsigned i = 0; i < 64; i++)
        mpz_init(ws->node[i]);
    job->ws = ws;
    return PK_OK;
}

static int ensure_primes_buffer(pk_job *job)
{
    if (!job->primes) {
        job->primes = malloc((PK_SIEVE_SPAN / 2 + 2) * sizeof *job->primes);
        if (!job->primes)
            return PK_E_NOMEM;
    }
    return PK_OK;
}

/* End of the segment holding lo: segments are aligned to PK_SIEVE_SPAN. */
static uint64_t segment_end(const pk_job *job, uint64_t lo)
{
    uint64_t k = lo / PK_SIEVE_SPAN + 1;
    if (k > PK_U64_MAX / PK_SIEVE_SPAN) /* the last segment below 2^64: its end would wrap to 0 */
        return job->eff_bound + 1;
    uint64_t end = k * PK_SIEVE_SPAN;
    return end > job->eff_bound ? job->eff_bound + 1 : end;
}

/* Poll between stints: consumes the interrupt like every other path. */
static int window_poll(void *ctx)
{
    return pk_job_poll(ctx);
}

/* What stopped a sieve's set-up (pk_sieve_prepare) before it was done. */
typedef struct {
    pk_job *job;
    uint64_t *budget;
    int why; /* PK_PATH_INTERRUPT or PK_PATH_BUDGET */
} prepare_poll;

/* Units charged per chunk of a sieve's set-up: a chunk takes about as long as
   this many limb operations of trial division. */
#define PK_SIEVE_CHUNK_UNITS UINT64_C(65536)

static int prepare_stop(void *ctx)
{
    prepare_poll *pp = ctx;
    if (pk_job_poll(pp->job)) {
        pp->why = PK_PATH_INTERRUPT;
        return 1;
    }
    *pp->budget = *pp->budget > PK_SIEVE_CHUNK_UNITS ? *pp->budget - PK_SIEVE_CHUNK_UNITS : 0;
    pp->why = PK_PATH_BUDGET;
    return *pp->budget == 0;
}

/* The set-up of the job's sieve for [lo, hi): PK_OK when ready, PK_E_NOMEM,
   or the PK_PATH_INTERRUPT / PK_PATH_BUDGET that stopped it (its work kept).
   Near 10^18 the set-up takes seconds: it must not hold off an interrupt. */
static int prepare_sieve(pk_job *job, uint64_t lo, uint64_t hi, uint64_t *budget)
{
    prepare_poll pp = {job, budget, PK_PATH_CONTINUE};
    int rc = pk_sieve_prepare(&job->sieve, lo, hi, prepare_stop, &pp);
    return rc < 0 ? PK_E_NOMEM : rc > 0 ? pp.why : PK_OK;
}

/* ------------------------------------------------------- word products */

/* Make primes[prime_pos] the first prime >= job->next, sieving as needed.
   Returns 0 then, 1 when no prime is left up to eff_bound, a PK_PATH_ code
   above 1 when the sieve's set-up stopped, or an error. */
static int load_primes(pk_job *job, uint64_t *budget)
{
    if (job->primes && job->next >= job->primes_lo && job->next < job->primes_hi) {
        while (job->prime_pos < job->prime_count && job->primes[job->prime_pos] < job->next)
            job->prime_pos++;
        if (job->prime_pos < job->prime_count)
            return 0;
        job->next = job->primes_hi; /* the segment is used up */
    }
    int rc = ensure_primes_buffer(job);
    if (rc != PK_OK)
        return rc;
    while (job->next <= job->eff_bound) {
        uint64_t lo = job->next, hi = segment_end(job, lo);
        rc = prepare_sieve(job, lo, hi, budget);
        if (rc != PK_OK)
            return rc;
        long count = pk_sieve_primes(&job->sieve, lo, hi, job->primes);
        if (count < 0)
            return PK_E_NOMEM;
        job->primes_lo = lo;
        job->primes_hi = hi;
        job->prime_count = count;
        job->prime_pos = 0;
        if (count > 0)
            return 0;
        job->next = hi; /* a segment without primes */
    }
    return 1;
}

static int word_products(pk_job *job, uint64_t *budget)
{
    while (job->next <= job->eff_bound) {
        if (pk_job_stop_requested(job))
            return PK_PATH_INTERRUPT;
        int rc = load_primes(job, budget);
        if (rc < 0 || rc == PK_PATH_INTERRUPT || rc == PK_PATH_BUDGET)
            return rc;
        if (rc > 0)
            break;
        uint64_t limbs = (uint64_t)mpz_size(job->cof);
        if (*budget == 0)
            return PK_PATH_BUDGET;
        uint64_t max_primes = *budget / limbs ? *budget / limbs : 1; /* overshoot by one at most */
        uint64_t group = PK_GROUP_LIMB_OPS / limbs * 2 + 2;
        if (max_primes > group)
            max_primes = group;

        const mp_limb_t *np = mpz_limbs_read(job->cof);
        mp_size_t nn = (mp_size_t)limbs;
        uint64_t tested = 0, hit = 0, last = 0;
        while (tested < max_primes && job->prime_pos < job->prime_count && !hit) {
            const uint64_t *p = &job->primes[job->prime_pos];
            long avail = job->prime_count - job->prime_pos;
            if ((uint64_t)avail > max_primes - tested)
                avail = (long)(max_primes - tested);
            pk_u128 prod = p[0];
            long k = 1;
            while (k < avail && k < 4 && prod * p[k] <= (pk_u128)PK_U64_MAX)
                prod *= p[k++];
            uint64_t r = mpn_mod_1(np, nn, (mp_limb_t)prod);
            long used = k;
            for (long i = 0; i < k; i++) {
                if (r % p[i] == 0) {
                    hit = p[i];
                    used = i + 1;
                    break;
                }
            }
            tested += (uint64_t)used;
            job->prime_pos += used;
            last = p[used - 1];
        }
        job->tested += tested;
        job->work += tested * limbs;
        *budget = *budget > tested * limbs ? *budget - tested * limbs : 0;
        job->next = last + 1;
        if (job->prime_pos >= job->prime_count && job->next < job->primes_hi)
            job->next = job->primes_hi;
        if (job->next > job->eff_bound + 1)
            job->next = job->eff_bound + 1;
        if (hit) {
            rc = pk_job_divide_out(job, hit);
            return rc < 0 ? rc : PK_PATH_CONTINUE; /* the cofactor changed */
        }
    }
    return PK_PATH_CONTINUE;
}

/* ---------------------------------------------------------------- windows */

/* Limbs per multiplication stint of window work on a cofactor of `limbs`
   limbs: the largest stint sets the interrupt latency (about 0.65 ms at
   100,000 digits, 2.5 ms at 16,384 limbs), smaller stints cost throughput. */
static size_t cap_limbs(size_t limbs)
{
    size_t cap = (limbs * PK_CAP_NUM) / PK_CAP_DEN;
    if (cap > PK_CAP_MAX_LIMBS)
        cap = PK_CAP_MAX_LIMBS;
    return cap < PK_CAP_MIN_LIMBS ? PK_CAP_MIN_LIMBS : cap;
}

static int ensure_tree(pk_job *job, size_t n)
{
    if (n <= job->tree_cap)
        return PK_OK;
    mpz_t *t = realloc(job->tree, n * sizeof *t);
    if (!t)
        return PK_E_NOMEM;
    for (size_t i = job->tree_cap; i < n; i++)
        mpz_init(t[i]);
    job->tree = t;
    job->tree_cap = n;
    return PK_OK;
}

/* The product of the primes of [lo, hi) into out; returns the count, -1 when
   memory runs out, -2 when interrupted between levels of the tree (the levels
   built so far stay in job->tree for the next call with the same range) or
   during the sieve's set-up, or -3 when the budget ran out in the set-up. */
static long range_product(pk_job *job, uint64_t lo, uint64_t hi, uint64_t *budget, mpz_t out)
{
    if (!job->rp_active || job->rp_lo != lo || job->rp_hi != hi) {
        if (ensure_primes_buffer(job) != PK_OK)
            return -1;
        job->rp_active = 0;
        int prepared = prepare_sieve(job, lo, hi, budget);
        if (prepared != PK_OK)
            return prepared == PK_PATH_INTERRUPT ? -2 : prepared == PK_PATH_BUDGET ? -3 : -1;
        long n = pk_sieve_primes(&job->sieve, lo, hi, job->primes);
        /* One word per prime at worst: above 2^32 no two primes share a word. */
        if (n < 0 || ensure_tree(job, (size_t)n + 1) != PK_OK)
            return -1;
        size_t words = 0;
        for (long i = 0; i < n;) {
            pk_u128 prod = job->primes[i++];
            while (i < n && prod * job->primes[i] <= (pk_u128)PK_U64_MAX)
                prod *= job->primes[i++];
            mpz_set_ui(job->tree[words++], (unsigned long)prod);
        }
        if (words == 0)
            mpz_set_ui(job->tree[words++], 1);
        job->rp_active = 1;
        job->rp_lo = lo;
        job->rp_hi = hi;
        job->rp_count = n;
        job->rp_words = words;
    }
    while (job->rp_words > 1) {
        if (window_poll(job))
            return -2;
        size_t words = job->rp_words, half = 0;
        for (size_t i = 0; i + 1 < words; i += 2)
            mpz_mul(job->tree[half++], job->tree[i], job->tree[i + 1]);
        if (words & 1)
            mpz_swap(job->tree[half++], job->tree[words - 1]);
        job->rp_words = half;
    }
    job->rp_active = 0;
    mpz_swap(out, job->tree[0]);
    return job->rp_count;
}

static void paired(pk_job *job)
{
    unsigned top = job->win_depth - 1;
    unsigned l = job->ws->level[top];
    uint64_t i = job->ws->index[top];
    job->ws->level[top - 1] = l + 1;
    job->ws->index[top - 1] = i >> 1;
    job->ws->count[top - 1] += job->ws->count[top];
    job->win_depth--;
    pk_cache_put(job->cache, l + 1, i >> 1, job->ws->node[top - 1], job->ws->count[top - 1]);
}

/* One stint of pairing the top node with its left sibling, when the two make
   an aligned node one level up (offered to the cache). Nodes of at most cap
   limbs are multiplied at once; larger ones, up to PK_PAIR_CAPS times cap
   (and PK_PAIR_MAX_LIMBS), only when a cache will keep the product for later
   jobs, by Karatsuba over stints. Returns 1 when it did a stint. */
static int pair_top(pk_job *job, size_t cap)
{
    pk_window_check *wc = job->wc;
    if (wc->pairing) {
        if (pk_karatsuba_stint(&wc->km)) {
            mpz_swap(job->ws->node[job->win_depth - 2], wc->pz);
            wc->pairing = 0;
            paired(job);
        }
        return 1;
    }
    if (job->win_depth < 2)
        return 0;
    unsigned top = job->win_depth - 1;
    unsigned l = job->ws->level[top];
    uint64_t i = job->ws->index[top];
    if (job->ws->level[top - 1] != l || job->ws->index[top - 1] + 1 != i || (i & 1) == 0)
        return 0;
    size_t a = mpz_size(job->ws->node[top - 1]), b = mpz_size(job->ws->node[top]);
    if (a <= cap && b <= cap) {
        mpz_mul(job->ws->node[top - 1], job->ws->node[top - 1], job->ws->node[top]);
        paired(job);
        return 1;
    }
    size_t most = PK_PAIR_CAPS * cap < PK_PAIR_MAX_LIMBS ? PK_PAIR_CAPS * cap : PK_PAIR_MAX_LIMBS;
    if (!job->cache || a > most || b > most)
        return 0;
    pk_karatsuba_start(&wc->km, wc->pz, job->ws->node[top - 1], job->ws->node[top], cap);
    wc->pairing = 1;
    return 1;
}

static void push_node(pk_job *job, unsigned level, uint64_t index, long count)
{
    unsigned d = job->win_depth++;
    job->ws->level[d] = level;
    job->ws->index[d] = index;
    job->ws->count[d] = count;
}

/* Split g (a product of distinct primes of [lo, hi), each dividing the
   cofactor) and divide them out: the primes of [lo, hi) from a sieve of its
   own, in order, each tested against what is left of g (a few limbs) until
   nothing is. */
static int split_window(pk_job *job, const mpz_t g, uint64_t lo, uint64_t hi)
{
    uint64_t *primes = malloc((PK_SIEVE_SPAN / 2 + 2) * sizeof *primes);
    if (!primes)
        return PK_E_NOMEM;
    pk_sieve sv;
    pk_sieve_init(&sv);
    mpz_t rest;
    mpz_init_set(rest, g);
    int rc = PK_OK;
    for (uint64_t a = lo; rc == PK_OK && a < hi && mpz_cmp_ui(rest, 1) != 0;) {
        uint64_t b = hi - a > PK_SIEVE_SPAN ? a + PK_SIEVE_SPAN : hi;
        long count = pk_sieve_primes(&sv, a, b, primes);
        if (count < 0)
            rc = PK_E_NOMEM;
        for (long i = 0; i < count && rc == PK_OK; i++) {
            if (!mpz_divisible_ui_p(rest, primes[i]))
                continue;
            mpz_divexact_ui(rest, rest, primes[i]);
            int r = pk_job_divide_out(job, primes[i]);
            if (r < 0)
                rc = r;
            if (mpz_cmp_ui(rest, 1) == 0)
                break;
        }
        a = b;
    }
    if (rc == PK_OK && mpz_cmp_ui(rest, 1) != 0)
        rc = PK_E_INTERNAL; /* never: g is a product of primes of the window */
    mpz_clear(rest);
    pk_sieve_free(&sv);
    free(primes);
    return rc;
}

static int ensure_window_check(pk_job *job)
{
    if (job->wc)
        return PK_OK;
    pk_window_check *wc = calloc(1, sizeof *wc);
    if (!wc)
        return PK_E_NOMEM;
    mpz_init(wc->acc);
    mpz_init(wc->y);
    mpz_init(wc->tmp);
    mpz_init(wc->g);
    pk_modulus_init(&wc->md);
    pk_reduce_init(&wc->rd);
    pk_fold_init(&wc->fd);
    mpz_init(wc->F);
    pk_gcd_init(&wc->gcd);
    pk_karatsuba_init(&wc->km);
    mpz_init(wc->pz);
    job->wc = wc;
    return PK_OK;
}

static void free_window_check(pk_job *job)
{
    pk_window_check *wc = job->wc;
    if (!wc)
        return;
    mpz_clear(wc->acc);
    mpz_clear(wc->y);
    mpz_clear(wc->tmp);
    mpz_clear(wc->g);
    pk_bmul_clear(&wc->mp);
    pk_modulus_clear(&wc->md);
    pk_reduce_clear(&wc->rd);
    pk_fold_clear(&wc->fd);
    mpz_clear(wc->F);
    pk_gcd_clear(&wc->gcd);
    pk_karatsuba_clear(&wc->km);
    mpz_clear(wc->pz);
    free(wc);
    job->wc = NULL;
}

/* One stint of folding the top node x of the window into acc: x is folded
   down to about split bits and finished by Barrett, then (after the first
   node) multiplied by acc and the product reduced the same way. Returns 1
   when the node is folded (and popped). */
static int fold_stint(pk_job *job)
{
    pk_window_check *wc = job->wc;
    mpz_srcptr x = job->ws->node[job->win_depth - 1];
    switch (wc->fold_phase) {
    case 0:
        pk_fold_start(&wc->fd, x, wc->split, wc->fc);
        wc->fold_phase = 1;
        /* fall through */
    case 1: /* fd.r = x folded */
        if (!pk_fold_stint(&wc->fd, x, wc->F, wc->split, wc->fc, wc->cap, wc->tmp))
            return 0;
        pk_reduce_start(&wc->rd, wc->fd.r, &wc->md);
        wc->fold_phase = 2;
        return 0;
    case 2: /* rd.r = x mod cof */
        if (!pk_reduce_stint(&wc->rd, wc->fd.r, &wc->md, wc->tmp))
            return 0;
        if (!wc->acc_set) {
            mpz_swap(wc->acc, wc->rd.r);
            wc->acc_set = 1;
            break;
        }
        wc->fold_phase = 3;
        return 0;
    case 3: /* y = acc·(x mod cof) */
        if (!pk_bmul_stint(wc->y, wc->acc, wc->rd.r, wc->cap, &wc->mp, wc->tmp))
            return 0;
        pk_fold_start(&wc->fd, wc->y, wc->split, wc->fc);
        wc->fold_phase = 4;
        return 0;
    case 4:
        if (!pk_fold_stint(&wc->fd, wc->y, wc->F, wc->split, wc->fc, wc->cap, wc->tmp))
            return 0;
        pk_reduce_start(&wc->rd, wc->fd.r, &wc->md);
        wc->fold_phase = 5;
        return 0;
    case 5: /* acc = y mod cof */
        if (!pk_reduce_stint(&wc->rd, wc->fd.r, &wc->md, wc->tmp))
            return 0;
        mpz_swap(wc->acc, wc->rd.r);
        break;
    }
    wc->fold_phase = 0;
    job->win_depth--;
    return 1;
}

int pk_tdgmp_check_window(pk_job *job)
{
    if (!job->win_open)
        return PK_OK;
    if (ensure_window_check(job) != PK_OK)
        return PK_E_NOMEM;
    pk_window_check *wc = job->wc;
    if (wc->stage == PK_CHECK_NONE) {
        wc->pairing = 0; /* a pairing not finished is dropped: the nodes are intact */
        wc->cap = cap_limbs(mpz_size(job->cof));
        wc->fold_phase = 0;
        wc->mp.i = 0;
        wc->stage = PK_CHECK_MODULUS;
        if (!wc->md.ready || !wc->f_ready || mpz_cmp(wc->md.m, job->cof) != 0) {
            pk_modulus_set(&wc->md, job->cof, wc->cap);
            wc->f_ready = 0;
            /* Folding blocks as long as the cofactor (at least a stint): the
               high part (at most fc + 2 bits) times F is then a balanced
               product, which pk_bmul_stint does by Karatsuba over stints, about
               a fifth cheaper per bit folded than slices of a stint. */
            size_t fl_limbs = mpz_size(job->cof) > wc->cap ? mpz_size(job->cof) : wc->cap;
            wc->fc = 64 * fl_limbs - 64;
            wc->split = wc->md.n + 1 + wc->fc;
        }
    }
    /* The reciprocal of the cofactor (kept while the cofactor stays), then
       every node folded into acc, then gcd(cof, acc): stint by stint, with
       a poll before each stint. */
    for (;;) {
        if (wc->stage == PK_CHECK_GCD)
            break;
        if (window_poll(job))
            return PK_PATH_INTERRUPT;
        if (wc->stage == PK_CHECK_MODULUS) {
            if (pk_modulus_stint(&wc->md)) {
                if (wc->f_ready) {
                    wc->stage = PK_CHECK_FOLD;
                } else { /* F = 2^split mod cof, by Barrett */
                    mpz_set_ui(wc->y, 0);
                    mpz_setbit(wc->y, wc->split);
                    pk_reduce_start(&wc->rd, wc->y, &wc->md);
                    wc->stage = PK_CHECK_CONSTANT;
                }
            }
        } else if (wc->stage == PK_CHECK_CONSTANT) {
            if (pk_reduce_stint(&wc->rd, wc->y, &wc->md, wc->tmp)) {
                mpz_swap(wc->F, wc->rd.r);
                wc->f_ready = 1;
                wc->stage = PK_CHECK_FOLD;
            }
        } else if (job->win_depth > 0) {
            fold_stint(job);
        } else {
            if (!wc->acc_set) {
                mpz_set_ui(wc->acc, 1);
                wc->acc_set = 1;
            }
            if (pk_gcd_start(&wc->gcd, job->cof, wc->acc, wc->cap) != PK_OK)
                return PK_E_NOMEM;
            wc->stage = PK_CHECK_GCD;
        }
    }
    int rc = pk_gcd_run(&wc->gcd, wc->g, window_poll, job);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return PK_PATH_INTERRUPT;
    uint64_t lo = job->next, hi = job->win_pos;
    job->next = hi;
    job->tested += job->win_tested;
    job->work += job->win_work;
    job->win_open = 0;
    job->win_depth = 0;
    job->win_tested = job->win_work = job->win_bits = 0;
    wc->stage = PK_CHECK_NONE;
    wc->acc_set = 0;
    rc = PK_OK;
    if (mpz_cmp_ui(wc->g, 1) != 0)
        rc = split_window(job, wc->g, lo, hi);
    return rc;
}

void pk_tdgmp_window_residue(const pk_job *job, mpz_t out)
{
    mpz_t t;
    mpz_init(t);
    mpz_set_ui(out, 1);
    if (job->wc && job->wc->acc_set)
        mpz_set(out, job->wc->acc);
    for (unsigned i = job->win_depth; i-- > 0;) {
        mpz_srcptr node = job->ws->node[i];
        if (mpz_cmp(node, job->cof) >= 0) {
            mpz_tdiv_r(t, node, job->cof);
            node = t;
        }
        mpz_mul(out, out, node);
        if (mpz_cmp(out, job->cof) >= 0)
            mpz_tdiv_r(out, out, job->cof);
    }
    mpz_clear(t);
}

int pk_tdgmp_window_restore(pk_job *job, uint64_t to, uint64_t tested, uint64_t work,
                            const mpz_t residue)
{
    if (ensure_window_stack(job) != PK_OK)
        return PK_E_NOMEM;
    mpz_set(job->ws->node[0], residue);
    job->win_open = 1;
    job->win_pos = to;
    job->win_tested = tested;
    job->win_work = work;
    job->win_depth = 1;
    job->ws->level[0] = PK_CACHE_LEVELS + 1; /* never pairs */
    job->ws->index[0] = 0;
    job->ws->count[0] = 0;
    job->win_bits = mpz_sizeinbase(residue, 2);
    return PK_OK;
}

/* Largest cached aligned node starting at segment k and ending by end_seg. */
static const pk_cache_entry *cached_node(pk_job *job, uint64_t k, uint64_t end_seg, unsigned *level)
{
    if (!job->cache)
        return NULL;
    for (unsigned l = PK_CACHE_LEVELS; l-- > 0;) {
        uint64_t span = UINT64_C(1) << l;
        if (k % span != 0 || k + span > end_seg)
            continue;
        const pk_cache_entry *e = pk_cache_get(job->cache, l, k >> l);
        if (e) {
            *level = l;
            return e;
        }
    }
    return NULL;
}

static int windows(pk_job *job, uint64_t *budget)
{
    size_t limbs = mpz_size(job->cof);
    uint64_t target = (uint64_t)limbs * 64 * PK_WINDOW_FACTOR;
    size_t cap = cap_limbs(limbs);
    if (ensure_window_stack(job) != PK_OK || ensure_window_check(job) != PK_OK)
        return PK_E_NOMEM;
    if (!job->win_open) {
        job->win_open = 1;
        job->win_pos = job->next;
        job->win_depth = 0;
        job->win_tested = job->win_work = job->win_bits = 0;
    }
    int checking = job->wc->stage != PK_CHECK_NONE;
    while (!checking && job->win_pos <= job->eff_bound && job->win_bits < target && job->win_depth < 62) {
        if (window_poll(job))
            return PK_PATH_INTERRUPT;
        if (pair_top(job, cap))
            continue; /* one stint per poll */
        if (*budget == 0)
            return PK_PATH_BUDGET;
        uint64_t lo = job->win_pos, hi = segment_end(job, lo);
        uint64_t k = lo / PK_SIEVE_SPAN;
        /* Whole: every prime of segment k is in [lo, hi) (0 and 1 are not primes). */
        int whole = (lo % PK_SIEVE_SPAN == 0 || (k == 0 && lo <= 2)) && hi == (k + 1) * PK_SIEVE_SPAN;
        /* Segments wholly inside the range that the window may still take. */
        uint64_t end_seg = (job->eff_bound + 1) / PK_SIEVE_SPAN;
        unsigned level = 0;
        const pk_cache_entry *e = whole ? cached_node(job, k, end_seg, &level) : NULL;
        long count;
        unsigned d = job->win_depth;
        if (e) {
            mpz_set(job->ws->node[d], e->product);
            count = e->count;
            hi = (k + (UINT64_C(1) << level)) * PK_SIEVE_SPAN;
        } else {
            count = range_product(job, lo, hi, budget, job->ws->node[d]);
            if (count == -2)
                return PK_PATH_INTERRUPT;
            if (count == -3)
                return PK_PATH_BUDGET;
            if (count < 0)
                return PK_E_NOMEM;
            if (whole)
                pk_cache_put(job->cache, 0, k, job->ws->node[d], count);
        }
        job->win_bits += mpz_sizeinbase(job->ws->node[d], 2);
        uint64_t units = (uint64_t)count * limbs / PK_WINDOW_UNIT_DIVISOR + 1;
        job->win_tested += (uint64_t)count;
        job->win_work += units;
        *budget = *budget > units ? *budget - units : 0;
        job->win_pos = hi;
        /* A partial segment gets a level no other node has: it never pairs. */
        push_node(job, whole ? level : PK_CACHE_LEVELS + 1, k >> level, count);
    }
    int rc = pk_tdgmp_check_window(job);
    return rc < 0 || rc == PK_PATH_INTERRUPT ? rc : PK_PATH_CONTINUE;
}

int pk_tdgmp(pk_job *job, uint64_t *budget)
{
    if (job->win_open || mpz_size(job->cof) >= PK_WINDOW_MIN_LIMBS)
        return windows(job, budget);
    return word_products(job, budget);
}
