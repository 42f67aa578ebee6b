/*
 * fuzz_common.h — helpers shared by the C fuzz harnesses: a failing property
 * aborts with a message (libFuzzer then saves the input), and a finished or
 * running job is checked against its own candidate with GMP.
 */
#ifndef PK_FUZZ_COMMON_H
#define PK_FUZZ_COMMON_H

#include <gmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primekit.h"

static void fz_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "\n%s:%d: property failed: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    abort();
}

#define FZ_CHECK(cond, ...)                                                                        \
    do {                                                                                           \
        if (!(cond))                                                                               \
            fz_fail(__FILE__, __LINE__, __VA_ARGS__);                                              \
    } while (0)

/* A pk_status value other than PK_E_INTERNAL (which would be a kernel bug). */
#define FZ_KNOWN_STATUS(rc) ((rc) >= PK_E_CHECKPOINT_STATE && (rc) <= PK_INTERRUPTED)

/* String accessors under the caller-buffer convention: ask for the size, then
   fetch; also check that a buffer one byte short is refused. Returns a
   malloc'ed string. */
typedef int (*fz_text_fn)(const pk_job *, char *, size_t, size_t *);

static char *fz_text(const pk_job *job, fz_text_fn fn, const char *what)
{
    size_t len = 0;
    int rc = fn(job, NULL, 0, &len);
    FZ_CHECK(rc == PK_E_BUFFER, "%s(NULL, 0) returned %s", what, pk_status_name(rc));
    char *buf = malloc(len + 1);
    FZ_CHECK(buf != NULL, "out of memory");
    size_t len2 = 0;
    rc = fn(job, buf, len, &len2);
    FZ_CHECK(rc == PK_E_BUFFER && len2 == len, "%s with cap == len returned %s", what,
             pk_status_name(rc));
    rc = fn(job, buf, len + 1, &len2);
    FZ_CHECK(rc == PK_OK && len2 == len && strlen(buf) == len, "%s returned %s (len %zu/%zu)",
             what, pk_status_name(rc), len2, len);
    return buf;
}

static int fz_is_canonical(const char *s)
{
    if (s[0] == '\0')
        return 0;
    if (s[0] == '0')
        return s[1] == '\0';
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9')
            return 0;
    return 1;
}

/*
 * The invariants of any job, running or finished:
 *   candidate = product of factor^exponent * cofactor, factors ascending,
 *   prime (GMP's test), exponents >= 1, and no factor divides the cofactor;
 *   progress agrees with the result; a finished job's cofactor status fits
 *   its cofactor.
 * Returns the progress snapshot's done flag.
 */
static int fz_check_job(const pk_job *job)
{
    pk_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.size = sizeof pr;
    FZ_CHECK(pk_job_progress(job, &pr) == PK_OK, "pk_job_progress failed");
    FZ_CHECK(pr.percent >= 0.0 && pr.percent <= 100.0, "percent %g out of range", pr.percent);
    FZ_CHECK((pr.percent == 100.0) == (pr.done != 0), "percent %g but done %d", pr.percent, pr.done);
    FZ_CHECK(pr.path >= PK_PATH_U64 && pr.path <= PK_PATH_GMP, "path %d", pr.path);

    char *cand = fz_text(job, pk_job_candidate, "pk_job_candidate");
    char *cof = fz_text(job, pk_job_cofactor, "pk_job_cofactor");
    FZ_CHECK(fz_is_canonical(cand) && fz_is_canonical(cof), "non-canonical candidate or cofactor");

    mpz_t n, c, prod, p, prev;
    mpz_inits(n, c, prod, p, prev, NULL);
    FZ_CHECK(mpz_set_str(n, cand, 10) == 0 && mpz_set_str(c, cof, 10) == 0, "unparsable output");
    FZ_CHECK(mpz_cmp_ui(c, 1) >= 0, "cofactor %s below 1", cof);
    mpz_set(prod, c);
    for (size_t i = 0; i < pr.factors_found; i++) {
        size_t len = 0;
        uint64_t e = 0;
        int rc = pk_job_factor(job, i, NULL, 0, &len, &e);
        FZ_CHECK(rc == PK_E_BUFFER, "pk_job_factor(NULL) returned %s", pk_status_name(rc));
        char *f = malloc(len + 1);
        FZ_CHECK(f != NULL, "out of memory");
        rc = pk_job_factor(job, i, f, len + 1, &len, &e);
        FZ_CHECK(rc == PK_OK && fz_is_canonical(f), "pk_job_factor %zu returned %s", i,
                 pk_status_name(rc));
        FZ_CHECK(mpz_set_str(p, f, 10) == 0, "unparsable factor");
        FZ_CHECK(e >= 1 && e <= mpz_sizeinbase(n, 2), "factor %s has exponent %llu", f,
                 (unsigned long long)e);
        FZ_CHECK(i == 0 || mpz_cmp(prev, p) < 0, "factors not ascending at %s", f);
        FZ_CHECK(mpz_probab_prime_p(p, 25) > 0, "listed factor %s is not prime", f);
        FZ_CHECK(!mpz_divisible_p(c, p), "factor %s still divides the cofactor", f);
        for (uint64_t k = 0; k < e; k++)
            mpz_mul(prod, prod, p);
        mpz_set(prev, p);
        free(f);
    }
    FZ_CHECK(pk_job_factor(job, pr.factors_found, NULL, 0, NULL, NULL) == PK_E_INDEX,
             "factor index past the end accepted");
    FZ_CHECK(mpz_cmp(prod, n) == 0, "factors x cofactor != candidate %s (cofactor %s)", cand, cof);

    pk_result res;
    memset(&res, 0, sizeof res);
    res.size = sizeof res;
    int rc = pk_job_result(job, &res);
    if (!pr.done) {
        FZ_CHECK(rc == PK_E_NOT_DONE, "pk_job_result on a running job returned %s",
                 pk_status_name(rc));
    } else {
        FZ_CHECK(rc == PK_OK, "pk_job_result returned %s", pk_status_name(rc));
        FZ_CHECK(res.factor_count == pr.factors_found, "factor counts differ");
        FZ_CHECK(res.cofactor_digits == strlen(cof), "cofactor_digits %zu for %s",
                 res.cofactor_digits, cof);
        int one = mpz_cmp_ui(c, 1) == 0;
        FZ_CHECK((res.cofactor_status == PK_COFACTOR_ONE) == one, "cofactor status %d for %s",
                 res.cofactor_status, cof);
        if (res.cofactor_status == PK_COFACTOR_PROBABLE_PRIME)
            FZ_CHECK(mpz_probab_prime_p(c, 25) > 0 && mpz_sizeinbase(c, 2) > 64,
                     "probable-prime cofactor %s", cof);
        if (res.cofactor_status == PK_COFACTOR_COMPOSITE)
            FZ_CHECK(mpz_probab_prime_p(c, 25) == 0, "composite cofactor %s is prime", cof);
        FZ_CHECK(res.complete == (res.cofactor_status == PK_COFACTOR_ONE ||
                                  res.cofactor_status == PK_COFACTOR_PROBABLE_PRIME),
                 "complete flag");
        if (res.is_prime == PK_PRIME_YES)
            FZ_CHECK(mpz_probab_prime_p(n, 25) > 0, "candidate %s reported prime", cand);
        else if (res.is_prime == PK_PRIME_NO)
            FZ_CHECK(mpz_probab_prime_p(n, 25) == 0, "candidate %s reported composite", cand);

        /* Divisors: only for complete answers; keep the list small. */
        size_t len = 0, count = 0;
        rc = pk_job_divisors(job, 64, NULL, 0, &len, &count);
        if (res.complete) {
            FZ_CHECK(rc == PK_E_BUFFER || rc == PK_E_TOO_MANY, "pk_job_divisors returned %s",
                     pk_status_name(rc));
            if (rc == PK_E_BUFFER) {
                char *d = malloc(len + 1);
                FZ_CHECK(d != NULL, "out of memory");
                rc = pk_job_divisors(job, 64, d, len + 1, &len, &count);
                FZ_CHECK(rc == PK_OK && count >= 1 && count <= 64, "pk_job_divisors returned %s",
                         pk_status_name(rc));
                /* First 1, last the candidate, ascending, each dividing it. */
                char *save = NULL, *tok = strtok_r(d, " ", &save);
                size_t seen = 0;
                mpz_set_ui(prev, 0);
                while (tok) {
                    FZ_CHECK(mpz_set_str(p, tok, 10) == 0 && mpz_cmp(prev, p) < 0 &&
                                 mpz_divisible_p(n, p),
                             "bad divisor %s of %s", tok, cand);
                    mpz_set(prev, p);
                    seen++;
                    tok = strtok_r(NULL, " ", &save);
                }
                FZ_CHECK(seen == count && mpz_cmp(prev, n) == 0, "divisor list of %s", cand);
                free(d);
            }
        } else {
            FZ_CHECK(rc == PK_E_INCOMPLETE, "pk_job_divisors on an incomplete answer returned %s",
                     pk_status_name(rc));
        }
    }
    mpz_clears(n, c, prod, p, prev, NULL);
    free(cand);
    free(cof);
    return pr.done;
}

/*
 * Open bug (known-bugs/fuzz_candidate/from-near-the-top-of-the-range): on the GMP path the sieve's base
 * holds every prime up to 1.5 x sqrt of the divisors sieved, so a range starting near 2^64 needs a 2 GB
 * table, beyond libFuzzer's memory limit. While fuzzing, a GMP-path job whose next divisor is at or above
 * 2^48 (a base table above 12 MB) is checked and checkpointed but not stepped, so that the fuzzer goes on
 * past such inputs. `make known-bugs` sets PK_FUZZ_KNOWN_BUGS=1, which turns this off.
 */
#define FZ_SIEVE_FROM_LIMIT (UINT64_C(1) << 48)

static int fz_known_bugs_fail(void)
{
    static int all = -1;
    if (all < 0) {
        const char *env = getenv("PK_FUZZ_KNOWN_BUGS");
        all = env != NULL && strcmp(env, "1") == 0;
    }
    return all;
}

static int fz_skip_steps(const pk_job *job)
{
    if (fz_known_bugs_fail())
        return 0;
    pk_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.size = sizeof pr;
    pk_job_progress(job, &pr);
    return !pr.done && pr.path == PK_PATH_GMP && pr.next_divisor >= FZ_SIEVE_FROM_LIMIT;
}

/* The checkpoint text of a job (malloc'ed, NUL-terminated). */
static char *fz_checkpoint(const pk_job *job, size_t *len)
{
    size_t n = 0;
    int rc = pk_job_checkpoint(job, NULL, 0, &n);
    FZ_CHECK(rc == PK_E_BUFFER, "pk_job_checkpoint(NULL) returned %s", pk_status_name(rc));
    char *text = malloc(n + 1);
    FZ_CHECK(text != NULL, "out of memory");
    rc = pk_job_checkpoint(job, text, n + 1, len);
    FZ_CHECK(rc == PK_OK && *len == n, "pk_job_checkpoint returned %s", pk_status_name(rc));
    return text;
}

/* Restore a job's checkpoint and require the copy to render the same text. */
static void fz_check_round_trip(const pk_job *job, const pk_options *opt)
{
    size_t len = 0, len2 = 0;
    char *text = fz_checkpoint(job, &len);
    pk_job *copy = NULL;
    int rc = pk_job_restore(text, len, opt, &copy);
    FZ_CHECK(rc == PK_OK, "own checkpoint refused: %s\n%s", pk_status_name(rc), text);
    char *again = fz_checkpoint(copy, &len2);
    FZ_CHECK(len == len2 && memcmp(text, again, len) == 0,
             "checkpoint of the restored job differs\n--- original\n%s--- restored\n%s", text, again);
    pk_progress a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.size = b.size = sizeof a;
    pk_job_progress(job, &a);
    pk_job_progress(copy, &b);
    FZ_CHECK(a.percent == b.percent && a.next_divisor == b.next_divisor &&
                 a.factors_found == b.factors_found && a.done == b.done &&
                 a.divisors_tested == b.divisors_tested && a.work_done == b.work_done,
             "progress differs after restore");
    fz_check_job(copy);
    pk_job_destroy(copy);
    free(text);
    free(again);
}

#endif
