/*
 * pkt.c — the test runner and the helpers shared by the C tests: reporting,
 * a seeded random generator, reading answers through the public API, and the
 * GMP oracle that says what a job must answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- reporting */

static int g_failures;
static uint64_t g_seed;
static const char *g_current = "";

void pkt_fail_at(const char *file, int line, const char *fmt, ...)
{
    g_failures++;
    if (g_failures > 20) {
        if (g_failures == 21) printf("    ... further failures of %s not printed\n", g_current);
        return;
    }
    const char *base = strrchr(file, '/');
    printf("    FAIL %s:%d: ", base ? base + 1 : file, line);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void pkt_say(const char *fmt, ...)
{
    printf("    ");
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

int pkt_failures(void) { return g_failures; }
uint64_t pkt_seed(void) { return g_seed; }

void pkt_u64(uint64_t v, char buf[24]) { snprintf(buf, 24, "%llu", (unsigned long long)v); }

/* ------------------------------------------------------------ randomness */

static uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void pkt_rng_for(pkt_rng *rng, const char *label)
{
    /* FNV-1a's step over the label, from a start value of its own (not
       FNV's: changing it would change every test's inputs). */
    uint64_t h = 1469598103934665603ull;
    for (const char *c = label; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    uint64_t x = g_seed ^ h;
    for (int i = 0; i < 4; i++) rng->s[i] = splitmix(&x);
}

uint64_t pkt_fnv1a64(const void *bytes, size_t n)
{
    const unsigned char *b = bytes;
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t pkt_rand(pkt_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

uint64_t pkt_rand_below(pkt_rng *rng, uint64_t n)
{
    if (n == 0) return 0;
    uint64_t limit = UINT64_MAX - UINT64_MAX % n, x;
    do x = pkt_rand(rng); while (x >= limit);
    return x % n;
}

uint64_t pkt_rand_range(pkt_rng *rng, uint64_t lo, uint64_t hi)
{
    if (hi - lo == UINT64_MAX) return pkt_rand(rng);
    return lo + pkt_rand_below(rng, hi - lo + 1);
}

void pkt_rand_bits(pkt_rng *rng, mpz_t out, unsigned bits)
{
    size_t words = (bits + 63) / 64;
    uint64_t w[8];
    mpz_set_ui(out, 0);
    if (bits == 0) return;
    if (words > 8) words = 8;
    for (size_t i = 0; i < words; i++) w[i] = pkt_rand(rng);
    mpz_import(out, words, -1, sizeof(uint64_t), 0, 0, w);
    mpz_fdiv_r_2exp(out, out, bits);
    mpz_setbit(out, bits - 1);
}

void pkt_rand_prime(pkt_rng *rng, mpz_t out, unsigned bits)
{
    if (bits < 2) bits = 2;
    for (;;) {
        pkt_rand_bits(rng, out, bits);
        if (bits > 32) mpz_nextprime(out, out);
        else if (!mpz_probab_prime_p(out, 25)) continue;
        if (mpz_sizeinbase(out, 2) == bits) return;
    }
}

/* ------------------------------------------------------------- answers */

void pkt_answer_init(pkt_answer *a) { memset(a, 0, sizeof *a); }

void pkt_answer_free(pkt_answer *a)
{
    pkt_factors_free(a->nfactors, a->factors, a->exponents);
    free(a->cofactor);
    pkt_answer_init(a);
}

void pkt_factors_free(size_t count, char **factors, uint64_t *exponents)
{
    if (factors)
        for (size_t i = 0; i < count; i++) free(factors[i]);
    free(factors);
    free(exponents);
}

int pkt_factors_read(const pk_job *job, size_t count, char ***factors, uint64_t **exponents)
{
    *factors = calloc(count ? count : 1, sizeof(char *));
    *exponents = calloc(count ? count : 1, sizeof(uint64_t));
    for (size_t i = 0; i < count; i++) {
        size_t len = 0;
        int st = pk_job_factor(job, i, NULL, 0, &len, NULL);
        if (st != PK_E_BUFFER) return st == PK_OK ? PK_E_INTERNAL : st;
        char *buf = malloc(len + 1);
        size_t len2 = 0;
        st = pk_job_factor(job, i, buf, len + 1, &len2, &(*exponents)[i]);
        if (st != PK_OK || len2 != len || strlen(buf) != len) {
            free(buf);
            return st != PK_OK ? st : PK_E_INTERNAL;
        }
        (*factors)[i] = buf;
    }
    return PK_OK;
}

char *pkt_cofactor(const pk_job *job)
{
    size_t len = 0;
    if (pk_job_cofactor(job, NULL, 0, &len) != PK_E_BUFFER) return NULL;
    char *buf = malloc(len + 1);
    if (pk_job_cofactor(job, buf, len + 1, &len) != PK_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *pkt_checkpoint(const pk_job *job, size_t *lenp)
{
    size_t len = 0;
    if (pk_job_checkpoint(job, NULL, 0, &len) != PK_E_BUFFER) return NULL;
    char *buf = malloc(len + 1);
    if (pk_job_checkpoint(job, buf, len + 1, &len) != PK_OK || strlen(buf) != len) {
        free(buf);
        return NULL;
    }
    if (lenp) *lenp = len;
    return buf;
}

int pkt_answer_read(const pk_job *job, pkt_answer *a)
{
    pkt_answer_init(a);
    a->res.size = sizeof a->res;
    int st = pk_job_result(job, &a->res);
    if (st != PK_OK) return st;
    a->nfactors = a->res.factor_count;
    st = pkt_factors_read(job, a->nfactors, &a->factors, &a->exponents);
    if (st != PK_OK) return st;
    a->cofactor = pkt_cofactor(job);
    return a->cofactor ? PK_OK : PK_E_INTERNAL;
}

int pkt_answer_equal(const pkt_answer *a, const pkt_answer *b, char *why, size_t cap)
{
#define DIFF(...) do { snprintf(why, cap, __VA_ARGS__); return 0; } while (0)
    if (a->nfactors != b->nfactors) DIFF("factor count %zu vs %zu", a->nfactors, b->nfactors);
    for (size_t i = 0; i < a->nfactors; i++) {
        if (strcmp(a->factors[i], b->factors[i]) != 0)
            DIFF("factor %zu: %s vs %s", i, a->factors[i], b->factors[i]);
        if (a->exponents[i] != b->exponents[i])
            DIFF("exponent of %s: %llu vs %llu", a->factors[i],
                 (unsigned long long)a->exponents[i], (unsigned long long)b->exponents[i]);
    }
    if (strcmp(a->cofactor ? a->cofactor : "(null)", b->cofactor ? b->cofactor : "(null)") != 0)
        DIFF("cofactor %s vs %s", a->cofactor ? a->cofactor : "(null)", b->cofactor ? b->cofactor : "(null)");
    if (a->res.factor_count != b->res.factor_count)
        DIFF("result.factor_count %zu vs %zu", a->res.factor_count, b->res.factor_count);
    if (a->res.cofactor_status != b->res.cofactor_status)
        DIFF("cofactor_status %d vs %d", a->res.cofactor_status, b->res.cofactor_status);
    if (a->res.complete != b->res.complete) DIFF("complete %d vs %d", a->res.complete, b->res.complete);
    if (a->res.is_prime != b->res.is_prime) DIFF("is_prime %d vs %d", a->res.is_prime, b->res.is_prime);
    /* The oracle leaves certainty at -1 where the header does not define it. */
    if (a->res.certainty != -1 && b->res.certainty != -1 && a->res.certainty != b->res.certainty)
        DIFF("certainty %d vs %d", a->res.certainty, b->res.certainty);
    /* Last, so that a wrong digit count does not hide the fields above. */
    if (a->res.cofactor_digits != b->res.cofactor_digits)
        DIFF("cofactor_digits %zu vs %zu", a->res.cofactor_digits, b->res.cofactor_digits);
    return 1;
#undef DIFF
}

void pkt_answer_format(const pkt_answer *a, char *buf, size_t cap)
{
    static const char *st[] = {"ONE", "PROBABLE_PRIME", "COMPOSITE", "UNKNOWN"};
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < a->nfactors && off < cap; i++) {
        off += (size_t)snprintf(buf + off, cap - off, "%s%s", i ? " * " : "", a->factors[i]);
        if (a->exponents[i] != 1 && off < cap)
            off += (size_t)snprintf(buf + off, cap - off, "^%llu", (unsigned long long)a->exponents[i]);
    }
    if (off < cap) {
        int cs = a->res.cofactor_status;
        snprintf(buf + off, cap - off, " | cofactor %s %s prime=%s complete=%d certainty=%d",
                 a->cofactor ? a->cofactor : "?", (cs >= 0 && cs <= 3) ? st[cs] : "?",
                 a->res.is_prime == PK_PRIME_YES ? "YES" : a->res.is_prime == PK_PRIME_NO ? "NO" : "UNKNOWN",
                 a->res.complete, a->res.certainty);
    }
}

/* ------------------------------------------------------------- progress */

int pkt_progress(const pk_job *job, pk_progress *p)
{
    memset(p, 0, sizeof *p);
    p->size = sizeof *p;
    return pk_job_progress(job, p);
}

void pkt_check_progress_step(const pk_progress *b, const pk_progress *a, const char *what)
{
    PKT_CHECK(a->percent >= b->percent, "%s: percent went back from %.17g to %.17g", what, b->percent,
              a->percent);
    PKT_CHECK(a->percent >= 0.0 && a->percent <= 100.0, "%s: percent %.17g outside 0..100", what, a->percent);
    PKT_CHECK(a->done ? a->percent == 100.0 : a->percent < 100.0, "%s: done=%d but percent=%.17g", what,
              a->done, a->percent);
    PKT_CHECK(a->next_divisor >= b->next_divisor, "%s: next_divisor went back %llu -> %llu", what,
              (unsigned long long)b->next_divisor, (unsigned long long)a->next_divisor);
    PKT_CHECK(a->divisors_tested >= b->divisors_tested, "%s: divisors_tested went back", what);
    PKT_CHECK(a->work_done >= b->work_done, "%s: work_done went back", what);
    PKT_CHECK(a->factors_found >= b->factors_found, "%s: factors_found went back", what);
    PKT_CHECK(a->path >= PK_PATH_U64 && a->path <= PK_PATH_GMP, "%s: path %d is not a pk_path", what, a->path);
    PKT_CHECK(a->path <= b->path || b->path == 0, "%s: path grew from %d to %d", what, b->path, a->path);
    PKT_CHECK(!b->done || a->done, "%s: a done job became not done", what);
}

int pkt_drive_job(pk_job **job, const pkt_drive *d)
{
    int st = PK_MORE;
    for (uint64_t step = 0; step < d->max_steps; step++) {
        uint64_t budget = d->next_budget ? d->next_budget(d->ctx, step) : d->budget;
        st = pk_job_step(*job, budget);
        if (st != PK_MORE && st != PK_INTERRUPTED)
            return st;
        if (d->after_step)
            d->after_step(d->ctx, job, st);
    }
    return PK_MORE;
}

pk_job *pkt_restore_copy(pk_job *job, const char *what, const char *must_contain, int same_text)
{
    size_t len = 0;
    char *text = pkt_checkpoint(job, &len);
    PKT_CHECK(text != NULL, "%s: checkpoint failed", what);
    if (!text)
        return job;
    if (must_contain)
        PKT_CHECK(strstr(text, must_contain) != NULL, "%s: the checkpoint lacks \"%s\"", what, must_contain);
    pk_job *back = NULL;
    int st = pk_job_restore(text, len, NULL, &back);
    PKT_CHECK_STATUS(st, PK_OK, what);
    if (st == PK_OK && back) {
        if (same_text) {
            size_t len2 = 0;
            char *again = pkt_checkpoint(back, &len2);
            PKT_CHECK(again && len2 == len && memcmp(again, text, len) == 0,
                      "%s: the restored job checkpoints differently", what);
            free(again);
        }
        pk_job_destroy(job);
        job = back;
    }
    free(text);
    return job;
}

int pkt_run(pk_job *job, uint64_t budget, uint64_t max_steps)
{
    pk_progress before, after;
    if (pkt_progress(job, &before) != PK_OK) {
        PKT_CHECK(0, "pk_job_progress failed");
        return PK_E_INTERNAL;
    }
    uint64_t stalled = 0;
    for (uint64_t steps = 0; steps < max_steps; steps++) {
        int st = pk_job_step(job, budget);
        int pst = pkt_progress(job, &after);
        PKT_CHECK_STATUS(pst, PK_OK, "pk_job_progress");
        pkt_check_progress_step(&before, &after, "pk_job_step");
        if (st == PK_DONE) {
            PKT_CHECK(after.done == 1, "step returned PK_DONE but progress.done=%d", after.done);
            /* A finished job stays finished and does no more work. */
            PKT_CHECK_STATUS(pk_job_step(job, budget), PK_DONE, "step after PK_DONE");
            pk_progress again;
            pkt_progress(job, &again);
            PKT_CHECK(again.work_done == after.work_done && again.next_divisor == after.next_divisor,
                      "step after PK_DONE changed the progress");
            return st;
        }
        if (st != PK_MORE) return st;
        PKT_CHECK(!after.done, "step returned PK_MORE but progress.done=1");
        /* A positive budget must move the job forward (within a few calls). */
        if (budget > 0 && after.work_done == before.work_done && after.next_divisor == before.next_divisor &&
            after.factors_found == before.factors_found && after.percent == before.percent) {
            if (++stalled == 1000) {
                PKT_CHECK(0, "step(budget %llu) returned PK_MORE 1000 times without progress (path %d, next %llu, "
                             "work %llu)",
                          (unsigned long long)budget, after.path, (unsigned long long)after.next_divisor,
                          (unsigned long long)after.work_done);
                return PK_MORE;
            }
        } else {
            stalled = 0;
        }
        if (budget > 0 && budget < (1u << 20)) {
            /* Budget honoured within a block on the 64/128-bit paths. */
            if (before.path != PK_PATH_GMP && after.path != PK_PATH_GMP && before.path != 0)
                PKT_CHECK(after.work_done - before.work_done <= budget + (1u << 16),
                          "step(budget %llu) did %llu units", (unsigned long long)budget,
                          (unsigned long long)(after.work_done - before.work_done));
        }
        before = after;
    }
    PKT_CHECK(0, "job not done after %llu steps of budget %llu", (unsigned long long)max_steps,
              (unsigned long long)budget);
    return PK_MORE;
}

int pkt_factor(const char *candidate, const char *from, const char *bound, size_t bpsw_digits, int simd,
               pkt_answer *out)
{
    pk_options o;
    pk_options_init(&o);
    o.from = from;
    o.bound = bound;
    if (bpsw_digits) o.bpsw_digits = bpsw_digits;
    if (simd) o.simd = simd;
    pk_job *job = NULL;
    pkt_answer_init(out);
    int st = pk_job_create(candidate, &o, &job);
    if (st != PK_OK) return st;
    st = pkt_run(job, UINT64_MAX, 4);
    if (st == PK_DONE) st = pkt_answer_read(job, out);
    pk_job_destroy(job);
    return st;
}

/* ----------------------------------------------------------------- oracle */

static uint32_t *g_primes;
static size_t g_nprimes;

const uint32_t *pkt_small_primes(size_t *count)
{
    if (!g_primes) {
        unsigned char *composite = calloc(PKT_SIEVE_LIMIT, 1);
        size_t n = 0;
        for (uint32_t i = 2; i < PKT_SIEVE_LIMIT; i++) {
            if (composite[i]) continue;
            n++;
            for (uint64_t j = (uint64_t)i * i; j < PKT_SIEVE_LIMIT; j += i) composite[j] = 1;
        }
        g_primes = malloc(n * sizeof *g_primes);
        n = 0;
        for (uint32_t i = 2; i < PKT_SIEVE_LIMIT; i++)
            if (!composite[i]) g_primes[n++] = i;
        g_nprimes = n;
        free(composite);
    }
    *count = g_nprimes;
    return g_primes;
}

static void answer_push(pkt_answer *a, const mpz_t p, uint64_t e)
{
    a->factors = realloc(a->factors, (a->nfactors + 1) * sizeof *a->factors);
    a->exponents = realloc(a->exponents, (a->nfactors + 1) * sizeof *a->exponents);
    a->factors[a->nfactors] = mpz_get_str(NULL, 10, p);
    a->exponents[a->nfactors] = e;
    a->nfactors++;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* floor(sqrt(c)) saturated to 64 bits. */
static uint64_t isqrt_sat(const mpz_t c)
{
    mpz_t r;
    mpz_init(r);
    mpz_sqrt(r, c);
    uint64_t v = mpz_sizeinbase(r, 2) > 64 ? UINT64_MAX : (uint64_t)mpz_get_ui(r);
    mpz_clear(r);
    return v;
}

void pkt_oracle(const mpz_t n, uint64_t bound, size_t bpsw_digits, const mpz_t *hints, size_t nhints,
                pkt_answer *out, uint64_t *stop)
{
    pkt_oracle_range(n, 2, bound, bpsw_digits, hints, nhints, out, stop);
}

void pkt_oracle_range(const mpz_t n, uint64_t from, uint64_t bound, size_t bpsw_digits, const mpz_t *hints,
                      size_t nhints, pkt_answer *out, uint64_t *stop)
{
    size_t np;
    const uint32_t *primes = pkt_small_primes(&np);
    if (bpsw_digits == 0) bpsw_digits = PK_DEFAULT_BPSW_DIGITS;
    uint64_t B = bound;
    if (B == 0) {
        uint64_t r = isqrt_sat(n);
        B = r < ((uint64_t)1 << 32) ? r : ((uint64_t)1 << 32);
    }
    /* Large hinted primes that trial division could reach, ascending. */
    uint64_t *big = malloc((nhints + 1) * sizeof *big);
    size_t nbig = 0;
    for (size_t i = 0; i < nhints; i++)
        if (mpz_sizeinbase(hints[i], 2) <= 64 && mpz_cmp_ui(hints[i], PKT_SIEVE_LIMIT) >= 0) {
            uint64_t v = mpz_get_ui(hints[i]);
            int dup = 0;
            for (size_t j = 0; j < nbig; j++) dup |= big[j] == v;
            if (!dup) big[nbig++] = v;
        }
    qsort(big, nbig, sizeof *big, cmp_u64);

    pkt_answer_init(out);
    mpz_t c, p;
    mpz_init_set(c, n);
    mpz_init(p);
    /* When the hints are n's whole factorization, trial division can only
     * ever hit them: skip the sieve (much faster for large bounds). */
    for (size_t k = 0; k < nhints; k++)
        while (mpz_cmp_ui(hints[k], 1) > 0 && mpz_divisible_p(c, hints[k])) mpz_divexact(c, c, hints[k]);
    int complete_hints = mpz_cmp_ui(c, 1) == 0;
    mpz_set(c, n);
    if (complete_hints) {
        nbig = 0;
        for (size_t k = 0; k < nhints; k++)
            if (mpz_sizeinbase(hints[k], 2) <= 64) {
                uint64_t v = mpz_get_ui(hints[k]);
                int dup = 0;
                for (size_t m = 0; m < nbig; m++) dup |= big[m] == v;
                if (!dup) big[nbig++] = v;
            }
        qsort(big, nbig, sizeof *big, cmp_u64);
        np = 0;
    }
    size_t i = 0, j = 0;
    for (;;) {
        uint64_t d;
        if (i < np) d = primes[i++];
        else if (j < nbig) d = big[j++];
        else break;
        if (d < from) continue;
        uint64_t lim = isqrt_sat(c);
        if (lim > B) lim = B;
        if (d > lim) break;
        if (mpz_divisible_ui_p(c, d)) {
            uint64_t e = 0;
            while (mpz_divisible_ui_p(c, d)) {
                mpz_divexact_ui(c, c, d);
                e++;
            }
            mpz_set_ui(p, d);
            answer_push(out, p, e);
        }
    }
    free(big);
    uint64_t lim = isqrt_sat(c);
    if (stop) *stop = lim < B ? lim : B;
    pkt_oracle_finish(n, c, from, B, bpsw_digits, out);
    mpz_clear(c);
    mpz_clear(p);
}

void pkt_oracle_finish(const mpz_t n, mpz_t c, uint64_t from, uint64_t B, size_t bpsw_digits, pkt_answer *out)
{
    uint64_t lim = isqrt_sat(c);
    if (bpsw_digits == 0) bpsw_digits = PK_DEFAULT_BPSW_DIGITS;

    int status;
    if (mpz_cmp_ui(c, 1) == 0) {
        status = PK_COFACTOR_ONE;
    } else if (lim <= B && from <= 2) {
        /* Trial division passed the square root: the remainder is prime. */
        if (!mpz_probab_prime_p(c, 25)) pkt_fail_at(__FILE__, __LINE__, "oracle: hints incomplete");
        answer_push(out, c, 1);
        mpz_set_ui(c, 1);
        status = PK_COFACTOR_ONE;
    } else if (mpz_sizeinbase(c, 2) <= 64) {
        if (mpz_probab_prime_p(c, 25)) {
            answer_push(out, c, 1);
            mpz_set_ui(c, 1);
            status = PK_COFACTOR_ONE;
        } else {
            status = PK_COFACTOR_COMPOSITE;
        }
    } else {
        char *s = mpz_get_str(NULL, 10, c);
        size_t digits = strlen(s);
        free(s);
        if (digits <= bpsw_digits)
            status = mpz_probab_prime_p(c, 25) ? PK_COFACTOR_PROBABLE_PRIME : PK_COFACTOR_COMPOSITE;
        else
            status = PK_COFACTOR_UNKNOWN;
    }
    out->cofactor = mpz_get_str(NULL, 10, c);
    out->res.size = sizeof out->res;
    out->res.factor_count = out->nfactors;
    out->res.cofactor_digits = strlen(out->cofactor);
    out->res.cofactor_status = status;
    out->res.complete = status == PK_COFACTOR_ONE || status == PK_COFACTOR_PROBABLE_PRIME;
    int n_prime = mpz_probab_prime_p(n, 25) != 0;
    if (out->nfactors == 0 && status == PK_COFACTOR_UNKNOWN) out->res.is_prime = PK_PRIME_UNKNOWN;
    else out->res.is_prime = n_prime ? PK_PRIME_YES : PK_PRIME_NO;
    if (out->res.is_prime == PK_PRIME_YES || out->res.complete)
        out->res.certainty = status == PK_COFACTOR_PROBABLE_PRIME ? PK_CERTAINTY_PROBABLE : PK_CERTAINTY_PROVEN;
    else
        out->res.certainty = -1;
}

static int canonical_decimal(const char *s)
{
    if (!s || !*s) return 0;
    if (s[0] == '0') return s[1] == 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

int pkt_check_answer_facts(const mpz_t n, const pkt_answer *a, const char *what)
{
    int before = pkt_failures();
    mpz_t prod, f, prev, pw;
    mpz_init_set_ui(prod, 1);
    mpz_init(f);
    mpz_init_set_ui(prev, 1);
    mpz_init(pw);
    PKT_CHECK(a->res.factor_count == a->nfactors, "%s: factor_count %zu but %zu listed", what,
              a->res.factor_count, a->nfactors);
    for (size_t i = 0; i < a->nfactors; i++) {
        if (!canonical_decimal(a->factors[i]) || mpz_set_str(f, a->factors[i], 10) != 0) {
            PKT_CHECK(0, "%s: factor %zu \"%s\" is not canonical decimal", what, i, a->factors[i]);
            continue;
        }
        PKT_CHECK(mpz_probab_prime_p(f, 25) != 0, "%s: listed factor %s is not prime", what, a->factors[i]);
        PKT_CHECK(mpz_cmp(f, prev) > 0, "%s: factors not strictly ascending at %s", what, a->factors[i]);
        PKT_CHECK(a->exponents[i] >= 1 && a->exponents[i] < 100000, "%s: exponent %llu of %s", what,
                  (unsigned long long)a->exponents[i], a->factors[i]);
        if (a->exponents[i] >= 1 && a->exponents[i] < 100000) {
            mpz_pow_ui(pw, f, (unsigned long)a->exponents[i]);
            mpz_mul(prod, prod, pw);
            /* Divided out completely: the exponent is the full multiplicity in n. */
            if (mpz_divisible_p(n, pw)) {
                mpz_divexact(pw, n, pw);
                PKT_CHECK(!mpz_divisible_p(pw, f), "%s: %s^%llu is not its full multiplicity in n", what,
                          a->factors[i], (unsigned long long)a->exponents[i]);
            }
        }
        mpz_set(prev, f);
    }
    if (canonical_decimal(a->cofactor) && mpz_set_str(f, a->cofactor, 10) == 0) {
        mpz_mul(prod, prod, f);
        PKT_CHECK(mpz_cmp(prod, n) == 0, "%s: factors x cofactor does not give back n", what);
        int st = a->res.cofactor_status;
        if (st == PK_COFACTOR_ONE) PKT_CHECK(mpz_cmp_ui(f, 1) == 0, "%s: status ONE, cofactor %s", what, a->cofactor);
        else PKT_CHECK(mpz_cmp_ui(f, 1) > 0, "%s: cofactor 1 with status %d", what, st);
        if (st == PK_COFACTOR_PROBABLE_PRIME) {
            PKT_CHECK(mpz_probab_prime_p(f, 25) != 0, "%s: probable-prime cofactor is composite", what);
            PKT_CHECK(mpz_sizeinbase(f, 2) > 64, "%s: probable-prime cofactor below 2^64 (should be a proven factor)", what);
        }
        if (st == PK_COFACTOR_COMPOSITE)
            PKT_CHECK(mpz_probab_prime_p(f, 25) == 0, "%s: composite cofactor %s is prime", what, a->cofactor);
        PKT_CHECK(a->res.cofactor_digits == strlen(a->cofactor), "%s: cofactor_digits %zu for %s", what,
                  a->res.cofactor_digits, a->cofactor);
        PKT_CHECK(a->res.complete == (st == PK_COFACTOR_ONE || st == PK_COFACTOR_PROBABLE_PRIME),
                  "%s: complete=%d with cofactor status %d", what, a->res.complete, st);
    } else {
        PKT_CHECK(0, "%s: cofactor \"%s\" is not canonical decimal", what, a->cofactor ? a->cofactor : "(null)");
    }
    mpz_clear(prod);
    mpz_clear(f);
    mpz_clear(prev);
    mpz_clear(pw);
    return pkt_failures() == before;
}

/* ------------------------------------------------------------- planted n */

void pkt_planted_init(pkt_planted *p)
{
    mpz_init(p->n);
    for (int i = 0; i < 16; i++) mpz_init(p->primes[i]);
    p->nprimes = 0;
}

void pkt_planted_clear(pkt_planted *p)
{
    mpz_clear(p->n);
    for (int i = 0; i < 16; i++) mpz_clear(p->primes[i]);
}

static void planted_add(pkt_planted *p, const mpz_t q, unsigned e)
{
    for (size_t i = 0; i < p->nprimes; i++)
        if (mpz_cmp(p->primes[i], q) == 0) {
            p->exps[i] += e;
            goto mul;
        }
    if (p->nprimes == 16) return;
    mpz_set(p->primes[p->nprimes], q);
    p->exps[p->nprimes++] = e;
mul:
    for (unsigned k = 0; k < e; k++) mpz_mul(p->n, p->n, q);
}

void pkt_planted_make(pkt_rng *rng, pkt_planted *p, unsigned min_bits, unsigned max_bits, unsigned small_bits)
{
    mpz_t q;
    mpz_init(q);
    for (int attempt = 0;; attempt++) {
        mpz_set_ui(p->n, 1);
        p->nprimes = 0;
        unsigned target = (unsigned)pkt_rand_range(rng, min_bits, max_bits);
        unsigned nsmall = (unsigned)pkt_rand_below(rng, 6);
        for (unsigned i = 0; i < nsmall; i++) {
            unsigned b = (unsigned)pkt_rand_range(rng, 2, small_bits);
            unsigned e = pkt_rand_below(rng, 6) == 0 ? (unsigned)pkt_rand_range(rng, 2, 4) : 1;
            pkt_rand_prime(rng, q, b);
            if (mpz_sizeinbase(p->n, 2) + e * b > target + 1) break;
            planted_add(p, q, e);
        }
        unsigned have = mpz_cmp_ui(p->n, 1) == 0 ? 0 : (unsigned)mpz_sizeinbase(p->n, 2);
        unsigned left = target > have ? target - have : 0;
        unsigned kind = (unsigned)pkt_rand_below(rng, 3);
        if (kind == 1 && left >= 2) {
            pkt_rand_prime(rng, q, left);
            planted_add(p, q, 1);
        } else if (kind == 2 && left >= 4) {
            unsigned b1 = (unsigned)pkt_rand_range(rng, 2, left - 2);
            pkt_rand_prime(rng, q, b1);
            planted_add(p, q, 1);
            pkt_rand_prime(rng, q, left - b1);
            planted_add(p, q, 1);
        }
        size_t bits = mpz_sizeinbase(p->n, 2);
        if (mpz_cmp_ui(p->n, 2) >= 0 && bits >= min_bits && bits <= max_bits) break;
        if (attempt > 1000) { /* fall back to a single prime of the wanted size */
            mpz_set_ui(p->n, 1);
            p->nprimes = 0;
            pkt_rand_prime(rng, q, max_bits);
            planted_add(p, q, 1);
            break;
        }
    }
    mpz_clear(q);
}

/* ------------------------------------------------------------------ runner */

struct pkt_test { const char *name; void (*fn)(void); };

#define PKT_ENTRY(name) {#name, test_##name},
static const struct pkt_test g_tests[] = {PKT_TESTS(PKT_ENTRY)};
#undef PKT_ENTRY

static int selected(const char *name, int argc, char **argv)
{
    if (argc <= 1) return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i])) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *env = getenv("PK_TEST_SEED");
    g_seed = env && *env ? strtoull(env, NULL, 0) : 20261123ull;
    unsigned timeout = 120;
    const char *tenv = getenv("PK_TEST_TIMEOUT");
    if (tenv && *tenv) timeout = (unsigned)strtoul(tenv, NULL, 10);
    printf("PrimeKit C tests, library %s, seed %llu (set PK_TEST_SEED to change)%s\n", pk_version_string(),
           (unsigned long long)g_seed, PKT_SANITIZED ? ", sanitizer build: reduced sizes" : "");

    int passed = 0, failed = 0;
    for (size_t t = 0; t < sizeof g_tests / sizeof g_tests[0]; t++) {
        if (!selected(g_tests[t].name, argc, argv)) continue;
        printf("--- %s\n", g_tests[t].name);
        fflush(stdout);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 2;
        }
        if (pid == 0) {
            g_current = g_tests[t].name;
            alarm(timeout); /* a hung kernel fails the test instead of the run */
            g_tests[t].fn();
            fflush(stdout);
            exit(g_failures ? 1 : 0); /* exit, not _exit: LeakSanitizer checks at exit */
        }
        int ws = 0;
        while (waitpid(pid, &ws, 0) < 0) {}
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
            printf("ok - %s (%.1f s)\n", g_tests[t].name, secs);
            passed++;
        } else {
            if (WIFSIGNALED(ws))
                printf("FAIL - %s (killed by signal %d%s, %.1f s)\n", g_tests[t].name, WTERMSIG(ws),
                       WTERMSIG(ws) == SIGALRM ? ": timed out" : "", secs);
            else
                printf("FAIL - %s (exit status %d, %.1f s)\n", g_tests[t].name, WEXITSTATUS(ws), secs);
            failed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
