/*
 * job/pipeline.c — the stages of a complete job after trial division.
 *
 * When trial division (the job's first stage, to pk_pipe_trial_bound) ends
 * with a cofactor it has not proven prime, the cofactor becomes the
 * pipeline's first part. Parts are kept ascending; the current part is the
 * first one not left by an effort limit. A new part is examined at once:
 *   - below 2^64 (when the word-size unit is built in): factored completely
 *     by pk_word_factor64, every prime proven;
 *   - a perfect power m^k becomes m with its exponent multiplied by k;
 *   - BPSW: proven prime below 2^64, probable prime above: a listed factor;
 *   - otherwise it is composite and gets split, in stints: up to 128 bits by
 *     the word-size splitter (pk_wsplit_*), above by ECM (factor/ecm_gmp.c);
 *     from PK_QS_MIN_BITS to PK_QS_MAX_BITS the quadratic sieve (factor/qs.c)
 *     takes over after a short pass of either (small factors first).
 * A split gives f and m/f, both new parts with m's exponent. A prime found
 * is divided out of every other part as well, so the listed primes never
 * divide the cofactor, which is always the product of the parts.
 *
 * Effort limits (pk_options.ecm_digits, work_limit) stop splitting: the part
 * is left, with what was tried on it, and the job ends with the primes
 * found and the parts left (cofactor status COMPOSITE). pk_job_conclude
 * does the same at the next poll, for every part: a new part still gets its
 * cheap examination (word-size factoring below 2^64, perfect power, BPSW),
 * a part being split is left as it stands.
 *
 * Every stint is bounded (a word-size split stint, an ECM curve set
 * up, a chunk of stage 1, a stage 2) and the interrupt flag is polled before
 * each; every stint boundary is a resume point, and the checkpoint records
 * the parts and the current split's state.
 */
#include <stdlib.h>
#include <string.h>

#include "job/pipeline.h"
#include "factor/ecm_gmp.h"

#include "factor/qs.h"
#include "factor/word.h"

/* Units of one word-size split stint: about 0.3 ms at 128 bits (2^16 units
   took up to 1.4 ms of CPU, measured with pk-bench's split-latency row). */
#define PK_WORD_STINT (UINT64_C(1) << 14)
/* The quadratic sieve takes parts of PK_QS_MIN_BITS to PK_QS_MAX_BITS bits
   (factor/qs.h) after the word-size pass (pk_qs_word_pass) or, above 128
   bits, after ECM through the level that targets factors of
   PK_QS_ECM_PERMILLE/1000 of the part's digits (when no ECM level limit is
   set; only PK_QS_ECM_FIRST curves when that is the first level): small
   factors are found first. */
#define PK_QS_ECM_PERMILLE 300
#define PK_QS_ECM_FIRST 8
/* From PK_QS_ECM_NEXT_FROM digits on, the sieve also waits for part of the
   next level's curves: (digits - PK_QS_ECM_NEXT_FROM)/PK_QS_ECM_NEXT_SLOPE
   of them, at most 1/PK_QS_ECM_NEXT_MAX (56 of the 300 curves at B1 = 50,000
   for 63 digits). There the sieve takes 10-40 s while those curves find most
   factors of 21-22 digits and about half of those of 24 in a few seconds; a
   part whose factor they miss pays them (Tests/Benchmarks/kernel/RESULTS.md). */
#define PK_QS_ECM_NEXT_FROM 54
#define PK_QS_ECM_NEXT_SLOPE 48
#define PK_QS_ECM_NEXT_MAX 4
/* QS units between polls: about 0.25 ms, plus the stint that crosses it (a
   stint took at most 0.5 ms up to 160 bits). */
#define PK_QS_POLL_UNITS (UINT64_C(1) << 19)
/* Percent of a complete job's progress given to trial division. */
#define PK_TRIAL_SHARE 10.0

enum { PK_PART_NEW = 0, PK_PART_SPLIT = 1, PK_PART_LEFT = 2, PK_PART_UNCLASSIFIED = 3 };
enum { PK_METHOD_NONE = 0, PK_METHOD_WORD = 1, PK_METHOD_ECM = 2, PK_METHOD_QS = 3 };
enum { PK_PIPE_SPLIT = 1, PK_PIPE_DONE = 2 };

static const char *const status_names[] = {"new", "split", "left", "unclassified"};
static const char *const method_names[] = {"none", "split", "ecm", "qs"};
static const char *const split_names[] = {"none", "word", "ecm", "qs"}; /* the split line's */

typedef struct pk_part {
    mpz_t v;
    uint64_t e;
    int status;                 /* PK_PART_* (UNCLASSIFIED: longer than bpsw_digits, left untested) */
    int method;                 /* PK_METHOD_* last used on it */
    uint64_t work, curves, b1, b2;
    unsigned digits;            /* ECM level completed */
} pk_part;

struct pk_pipe {
    int stage;                  /* PK_PIPE_* */
    pk_part *parts;
    size_t count, cap;
    uint64_t work;              /* units since trial division ended */
    uint64_t start_bits;        /* bits of the cofactor when the pipeline started */
    int split;                  /* PK_METHOD_* of the current part's split (status SPLIT) */
    pk_ecm ecm;
    pk_wsplit ws;
    pk_qs *qs;                  /* while split is PK_METHOD_QS */
    /* A share of the current part's ECM curves (pk_job_ecm_share): share_count
       shares, this one runs curves base_curve + share_index + k·share_count
       and nothing else; share_count is 0 in every other job. */
    uint64_t share_index, share_count;
    uint64_t share_base_curve;  /* the shared job's current curve */
    uint64_t share_base_curves; /* curves it had finished */
    uint64_t share_base_work;   /* its work (units since trial division) */
    uint64_t share_allowance;   /* units this share may spend (0: no work limit) */
    int share_found;            /* share_factor splits the part */
    mpz_t share_factor;
};

uint64_t pk_pipe_trial_bound(size_t bits)
{
    /* Chosen by measurement (docs/kernel.md): to 2^16 trial division costs
       0.05-0.3 ms up to 60 digits; to 2^20 it costs ten times more (2.7 ms at
       50-60 digits), about one ECM curve at B1 = 2000, which finds most
       primes of 2^16..2^20 that are there (about one number in five has one). Below
       2^64 the word-size unit removes small primes itself. */
    return bits <= 64 ? 1u << 10 : 1u << 16;
}

static struct pk_pipe *pipe_new(void)
{
    struct pk_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    pk_ecm_init(&p->ecm);
    mpz_init(p->share_factor);
    return p;
}

void pk_pipe_free(struct pk_pipe *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->count; i++)
        mpz_clear(p->parts[i].v);
    free(p->parts);
    pk_ecm_clear(&p->ecm);
    pk_qs_free(p->qs);
    mpz_clear(p->share_factor);
    free(p);
}

/* The current split ends (its part was split, changed or left). */
static void end_split(struct pk_pipe *p)
{
    p->split = PK_METHOD_NONE;
    pk_qs_free(p->qs);
    p->qs = NULL;
}

/* Insert a new part v^e in order (merging with an equal part). */
static int insert_part(struct pk_pipe *p, const mpz_t v, uint64_t e)
{
    size_t i = 0;
    while (i < p->count && mpz_cmp(p->parts[i].v, v) < 0)
        i++;
    if (i < p->count && mpz_cmp(p->parts[i].v, v) == 0) {
        p->parts[i].e += e;
        return PK_OK;
    }
    if (p->count == p->cap) {
        size_t cap = p->cap ? 2 * p->cap : 8;
        pk_part *np = realloc(p->parts, cap * sizeof *np);
        if (!np)
            return PK_E_NOMEM;
        p->parts = np;
        p->cap = cap;
    }
    memmove(&p->parts[i + 1], &p->parts[i], (p->count - i) * sizeof *p->parts);
    pk_part *pt = &p->parts[i];
    memset(pt, 0, sizeof *pt);
    mpz_init_set(pt->v, v);
    pt->e = e;
    p->count++;
    return PK_OK;
}

static void remove_part(struct pk_pipe *p, size_t i)
{
    if (p->parts[i].status == PK_PART_SPLIT)
        end_split(p);
    mpz_clear(p->parts[i].v);
    memmove(&p->parts[i], &p->parts[i + 1], (p->count - i - 1) * sizeof *p->parts);
    p->count--;
}

/* Move part i to its place after its value shrank, merging with an equal one. */
static void resort_part(struct pk_pipe *p, size_t i)
{
    while (i > 0 && mpz_cmp(p->parts[i - 1].v, p->parts[i].v) > 0) {
        pk_part t = p->parts[i - 1];
        p->parts[i - 1] = p->parts[i];
        p->parts[i] = t;
        i--;
    }
    if (i > 0 && mpz_cmp(p->parts[i - 1].v, p->parts[i].v) == 0) {
        p->parts[i - 1].e += p->parts[i].e;
        p->parts[i - 1].status = PK_PART_NEW;
        remove_part(p, i);
    }
}

/* The cofactor is the product of the parts. */
static void refresh_cofactor(pk_job *job)
{
    struct pk_pipe *p = job->pipe;
    mpz_t t;
    mpz_init(t);
    mpz_set_ui(job->cof, 1);
    for (size_t i = 0; i < p->count; i++) {
        mpz_pow_ui(t, p->parts[i].v, p->parts[i].e);
        mpz_mul(job->cof, job->cof, t);
    }
    mpz_clear(t);
    pk_job_refresh_bound(job);
}

/* List the prime q (exponent e) and divide it out of every part. */
static int resolve_prime(pk_job *job, const mpz_t q, uint64_t e, int certainty)
{
    struct pk_pipe *p = job->pipe;
    for (size_t i = 0; i < p->count;) {
        pk_part *pt = &p->parts[i];
        int changed = 0;
        while (mpz_divisible_p(pt->v, q)) {
            mpz_divexact(pt->v, pt->v, q);
            e += pt->e;
            changed = 1;
        }
        if (!changed) {
            i++;
            continue;
        }
        if (mpz_cmp_ui(pt->v, 1) == 0) {
            remove_part(p, i);
            continue;
        }
        if (pt->status == PK_PART_SPLIT)
            end_split(p);
        pt->status = PK_PART_NEW;
        resort_part(p, i);
        i = 0; /* the order changed: look again (each pass divides something out) */
    }
    int rc = pk_job_add_prime(job, q, e, certainty);
    refresh_cofactor(job);
    return rc;
}

static size_t current(const struct pk_pipe *p)
{
    size_t i = 0;
    while (i < p->count && (p->parts[i].status == PK_PART_LEFT || p->parts[i].status == PK_PART_UNCLASSIFIED))
        i++;
    return i;
}

/* The cofactor status the parts left give: ONE when none is left, UNKNOWN
   when one is unclassified (too long to test), COMPOSITE otherwise. */
static int parts_status(const struct pk_pipe *p)
{
    int status = PK_COFACTOR_ONE;
    for (size_t i = 0; i < p->count; i++) {
        if (p->parts[i].status == PK_PART_UNCLASSIFIED)
            status = PK_COFACTOR_UNKNOWN;
        else if (status == PK_COFACTOR_ONE)
            status = PK_COFACTOR_COMPOSITE;
    }
    return status;
}

static void finish(pk_job *job)
{
    struct pk_pipe *p = job->pipe;
    int status = parts_status(p);
    p->stage = PK_PIPE_DONE;
    end_split(p);
    job->cof_status = status;
    job->cof_digits = pk_decimal_length(job->cof);
    job->done = 1;
    job->percent = 100.0;
}

int pk_pipe_start(pk_job *job)
{
    struct pk_pipe *p = pipe_new();
    if (!p)
        return PK_E_NOMEM;
    p->stage = PK_PIPE_SPLIT;
    p->start_bits = mpz_sizeinbase(job->cof, 2);
    int rc = insert_part(p, job->cof, 1);
    if (rc != PK_OK) {
        pk_pipe_free(p);
        return rc;
    }
    job->pipe = p;
    return PK_OK;
}

static int limit_reached(const pk_job *job)
{
    return job->work_limit && job->pipe->work >= job->work_limit;
}

static unsigned ecm_limit_levels(const pk_job *job)
{
    if (!job->ecm_digits)
        return PK_ECM_LEVELS + 1;
    unsigned n = 0;
    while (n < PK_ECM_LEVELS && pk_ecm_levels[n].digits < job->ecm_digits)
        n++;
    return n + 1; /* levels through the one covering ecm_digits */
}

/* Record on part i what ECM tried on it. */
static void note_ecm(struct pk_pipe *p, pk_part *pt)
{
    pt->curves = p->ecm.curves;
    pt->b1 = p->ecm.last_b1;
    pt->b2 = p->ecm.last_b2;
    unsigned done = pk_ecm_levels_done(&p->ecm);
    pt->digits = done ? pk_ecm_levels[done - 1].digits : 0;
}

static void leave(struct pk_pipe *p, size_t i)
{
    pk_part *pt = &p->parts[i];
    if (pt->status == PK_PART_SPLIT && p->split == PK_METHOD_ECM)
        note_ecm(p, pt);
    pt->status = PK_PART_LEFT;
    end_split(p);
}

/* Examine the new part i: word-size factoring, perfect power, primality, or
   the start of a split. */
static int examine(pk_job *job, size_t i)
{
    struct pk_pipe *p = job->pipe;
    pk_part *pt = &p->parts[i];
    size_t bits = mpz_sizeinbase(pt->v, 2);
    if (bits <= 64) {
        uint64_t primes[15];
        uint8_t exps[15];
        uint64_t e = pt->e;
        int k = pk_word_factor64(mpz_get_ui(pt->v), primes, exps);
        remove_part(p, i);
        int rc = PK_OK;
        mpz_t q;
        mpz_init(q);
        for (int j = 0; j < k && rc == PK_OK; j++) {
            mpz_set_ui(q, primes[j]);
            rc = resolve_prime(job, q, e * exps[j], PK_CERTAINTY_PROVEN);
        }
        mpz_clear(q);
        refresh_cofactor(job);
        return rc;
    }
    if (mpz_sizeinbase(pt->v, 10) > job->bpsw_digits + 1 ||
        (mpz_sizeinbase(pt->v, 10) == job->bpsw_digits + 1 && pk_decimal_length(pt->v) > job->bpsw_digits)) {
        pt->status = PK_PART_UNCLASSIFIED;
        return PK_OK;
    }
    if (mpz_perfect_power_p(pt->v)) {
        mpz_t r;
        mpz_init(r);
        for (unsigned long k = 2; k <= bits; k++) {
            if (mpz_root(r, pt->v, k)) {
                mpz_swap(pt->v, r);
                pt->e *= k;
                break;
            }
        }
        mpz_clear(r);
        resort_part(p, i);
        refresh_cofactor(job);
        return PK_OK;
    }
    int prime = pk_bpsw(pt->v);
    if (prime) {
        mpz_t q;
        mpz_init_set(q, pt->v);
        uint64_t e = pt->e;
        remove_part(p, i);
        int rc = resolve_prime(job, q, e, prime == 2 ? PK_CERTAINTY_PROVEN : PK_CERTAINTY_PROBABLE);
        mpz_clear(q);
        return rc;
    }
    if (limit_reached(job) || job->concluded) {
        leave(p, i);
        return PK_OK;
    }
    pt->status = PK_PART_SPLIT;
    if (bits <= 128) {
        pk_u128 n = ((pk_u128)mpz_getlimbn(pt->v, 1) << 64) | mpz_getlimbn(pt->v, 0);
        pk_wsplit_init(&p->ws, n);
        p->split = pt->method = PK_METHOD_WORD;
        return PK_OK;
    }
    pk_ecm_start(&p->ecm, pt->v);
    p->split = pt->method = PK_METHOD_ECM;
    return PK_OK;
}

/* The split of part i found 1 < f < v: replace v^e by f^e and (v/f)^e. */
static int split_found(pk_job *job, size_t i, const mpz_t f)
{
    struct pk_pipe *p = job->pipe;
    mpz_t a, b;
    mpz_init_set(a, f);
    mpz_init(b);
    mpz_divexact(b, p->parts[i].v, f);
    uint64_t e = p->parts[i].e;
    remove_part(p, i);
    int rc = insert_part(p, a, e);
    if (rc == PK_OK)
        rc = insert_part(p, b, e);
    mpz_clear(a);
    mpz_clear(b);
    return rc;
}

/* The number of finished ECM curves after which part i (above 128 bits)
   passes to the quadratic sieve; UINT64_MAX when it never does (outside the
   sieve's sizes, or with an ECM level limit set). */
static uint64_t qs_ecm_curves(const pk_job *job, size_t i)
{
    const struct pk_pipe *p = job->pipe;
    size_t bits = mpz_sizeinbase(p->parts[i].v, 2);
    if (bits < PK_QS_MIN_BITS || bits > PK_QS_MAX_BITS || job->ecm_digits)
        return UINT64_MAX;
    size_t digits = mpz_sizeinbase(p->parts[i].v, 10);
    size_t target = digits * PK_QS_ECM_PERMILLE / 1000;
    unsigned through = 1;
    while (through < PK_ECM_LEVELS && pk_ecm_levels[through - 1].digits < target)
        through++;
    if (through == 1) /* up to ~50 digits the sieve takes ~0.2 s: 8 curves (~20 ms) of the first level */
        return PK_QS_ECM_FIRST;
    uint64_t at = pk_ecm_curves_before(through); /* the levels through `through` are done */
    if (through >= PK_ECM_LEVELS || digits <= PK_QS_ECM_NEXT_FROM)
        return at;
    uint64_t next = pk_ecm_levels[through].curves;
    uint64_t extra = next * (digits - PK_QS_ECM_NEXT_FROM) / PK_QS_ECM_NEXT_SLOPE;
    if (extra > next / PK_QS_ECM_NEXT_MAX)
        extra = next / PK_QS_ECM_NEXT_MAX;
    return at + extra;
}

/* The number of finished curves at which ECM on part i ends: the level
   limit's curves, or the quadratic sieve's turn (UINT64_MAX: never). */
static uint64_t ecm_end_curves(const pk_job *job, size_t i)
{
    unsigned levels = ecm_limit_levels(job);
    uint64_t end = levels <= PK_ECM_LEVELS ? pk_ecm_curves_before(levels) : UINT64_MAX;
    uint64_t qs = qs_ecm_curves(job, i);
    return qs < end ? qs : end;
}

/* Whether the split of part i passes to the quadratic sieve now: after the
   word-size pass, or after the ECM pass when no ECM level limit is set. */
static int qs_due(const pk_job *job, size_t i)
{
    const struct pk_pipe *p = job->pipe;
    size_t bits = mpz_sizeinbase(p->parts[i].v, 2);
    if (bits < PK_QS_MIN_BITS || bits > PK_QS_MAX_BITS)
        return 0;
    if (p->split == PK_METHOD_WORD)
        return pk_wsplit_work(&p->ws) >= pk_qs_word_pass((unsigned)bits);
    if (p->split != PK_METHOD_ECM)
        return 0;
    return p->ecm.curves >= qs_ecm_curves(job, i);
}

static int start_qs(struct pk_pipe *p, size_t i)
{
    pk_qs *q = pk_qs_new(p->parts[i].v);
    if (!q)
        return PK_E_NOMEM;
    if (p->split == PK_METHOD_ECM)
        note_ecm(p, &p->parts[i]);
    pk_qs_free(p->qs);
    p->qs = q;
    p->split = p->parts[i].method = PK_METHOD_QS;
    return PK_OK;
}

/* One stint of splitting part i. */
static int split_stint(pk_job *job, size_t i, uint64_t *budget)
{
    struct pk_pipe *p = job->pipe;
    pk_part *pt = &p->parts[i];
    if (p->split != PK_METHOD_QS && qs_due(job, i)) {
        int rc = start_qs(p, i);
        if (rc != PK_OK)
            return rc;
    }
    if (limit_reached(job) ||
        (p->split == PK_METHOD_ECM && pk_ecm_levels_done(&p->ecm) >= ecm_limit_levels(job))) {
        leave(p, i);
        return PK_OK;
    }
    int found;
    uint64_t used;
    mpz_t f;
    mpz_init(f);
    if (p->split == PK_METHOD_WORD) {
        uint64_t stint = *budget < PK_WORD_STINT ? *budget : PK_WORD_STINT;
        uint64_t w0 = pk_wsplit_work(&p->ws);
        pk_u128 g = 0;
        found = pk_wsplit_run(&p->ws, stint ? stint : 1, &g);
        used = pk_wsplit_work(&p->ws) - w0;
        *budget = *budget > used ? *budget - used : 0;
        if (found) {
            mpz_set_ui(f, (unsigned long)(g >> 64));
            mpz_mul_2exp(f, f, 64);
            mpz_add_ui(f, f, (unsigned long)g);
        }
    } else if (p->split == PK_METHOD_QS) {
        /* Whole stints (a polynomial, some columns, a square root) up to PK_QS_POLL_UNITS. */
        found = pk_qs_run(p->qs, *budget < PK_QS_POLL_UNITS ? (*budget ? *budget : 1) : PK_QS_POLL_UNITS, f, &used);
        *budget = *budget > used ? *budget - used : 0;
        if (found == -1)
            found = PK_E_NOMEM;
        else if (found < 0)
            found = PK_E_INTERNAL; /* never: QS fails only on a prime or a perfect power */
    } else
    {
        uint64_t w0 = p->ecm.work;
        found = pk_ecm_stint(&p->ecm, budget, f);
        used = p->ecm.work - w0;
    }
    p->work += used;
    pt->work += used;
    int rc = found < 0 ? found : PK_OK;
    if (found == 1) {
        if (mpz_cmp_ui(f, 1) <= 0 || mpz_cmp(f, pt->v) >= 0 || !mpz_divisible_p(pt->v, f))
            rc = PK_E_INTERNAL;
        else
            rc = split_found(job, i, f);
    }
    mpz_clear(f);
    return rc;
}

/* ------------------------------------------------------------ ECM shares */

/* The curve number at which a share's curves end (UINT64_MAX: never): the
   curve the shared job would have reached when its ECM pass ends. */
static uint64_t share_end_curve(const pk_job *job)
{
    const struct pk_pipe *p = job->pipe;
    uint64_t end = ecm_end_curves(job, current(p));
    if (end == UINT64_MAX)
        return end;
    return end > p->share_base_curves ? p->share_base_curve + (end - p->share_base_curves) : p->share_base_curve;
}

/* Why a share's curves are over: 0 not over, 1 a factor found, 2 the curves
   of its part's ECM pass are done, 3 its part of the work limit is spent,
   4 concluded. */
static int share_end(const pk_job *job)
{
    const struct pk_pipe *p = job->pipe;
    if (!p || !p->share_count)
        return 0;
    if (p->share_found)
        return 1;
    if (p->ecm.curve >= share_end_curve(job))
        return 2;
    if (p->share_allowance && p->work - p->share_base_work >= p->share_allowance)
        return 3;
    if (job->concluded)
        return 4;
    return 0;
}

int pk_pipe_share_over(const pk_job *job)
{
    return share_end(job) != 0;
}

int pk_pipe_share_info(const pk_job *job, uint64_t *index, uint64_t *count, int *found)
{
    const struct pk_pipe *p = job->pipe;
    if (!p || !p->share_count)
        return PK_E_OPTIONS;
    *index = p->share_index;
    *count = p->share_count;
    *found = p->share_found;
    return PK_OK;
}

/* One ECM stint of a share; a factor found is kept, not split on. */
static int share_stint(pk_job *job, uint64_t *budget)
{
    struct pk_pipe *p = job->pipe;
    pk_part *pt = &p->parts[current(p)];
    mpz_t f;
    mpz_init(f);
    uint64_t w0 = p->ecm.work;
    int found = pk_ecm_stint(&p->ecm, budget, f);
    uint64_t used = p->ecm.work - w0;
    p->work += used;
    pt->work += used;
    int rc = found < 0 ? found : PK_OK;
    if (found == 1) {
        if (mpz_cmp_ui(f, 1) <= 0 || mpz_cmp(f, pt->v) >= 0 || !mpz_divisible_p(pt->v, f)) {
            rc = PK_E_INTERNAL;
        } else {
            mpz_set(p->share_factor, f);
            p->share_found = 1;
        }
    }
    mpz_clear(f);
    return rc;
}

static int share_step(pk_job *job, uint64_t *budget)
{
    for (;;) {
        if (share_end(job))
            return PK_PATH_CONTINUE;
        if (pk_job_poll(job) && !job->concluded)
            return PK_PATH_INTERRUPT;
        if (job->concluded)
            return PK_PATH_CONTINUE;
        if (*budget == 0)
            return PK_PATH_BUDGET;
        int rc = share_stint(job, budget);
        if (rc < 0)
            return rc;
        double pc = pk_pipe_percent(job);
        if (pc > job->percent)
            job->percent = pc;
    }
}

int pk_pipe_share(pk_job *job, uint64_t index, uint64_t count)
{
    struct pk_pipe *p = job->pipe;
    if (!p || p->stage != PK_PIPE_SPLIT || job->done || job->concluded || p->share_count || count < 2 ||
        index >= count)
        return PK_E_OPTIONS;
    size_t i = current(p);
    if (i == p->count || p->parts[i].status != PK_PART_SPLIT || p->split != PK_METHOD_ECM || limit_reached(job) ||
        p->ecm.curves >= ecm_end_curves(job, i) || p->ecm.stride > 1)
        return PK_E_OPTIONS; /* no ECM stint is due */
    p->share_index = index;
    p->share_count = count;
    p->share_base_curve = p->ecm.curve;
    p->share_base_curves = p->ecm.curves;
    p->share_base_work = p->work;
    p->share_allowance = 0;
    if (job->work_limit) {
        uint64_t left = job->work_limit - p->work; /* above 0: the limit is not reached */
        p->share_allowance = left / count + (left % count != 0);
    }
    p->share_found = 0;
    mpz_set_ui(p->share_factor, 0);
    pk_ecm_make_share(&p->ecm, p->share_base_curve + index, count);
    job->revision++;
    return PK_OK;
}

/* Shares a and b belong to one shared job: same candidate, state and
   parts, same share count and base. */
static int same_shared_job(const pk_job *a, const pk_job *b)
{
    const struct pk_pipe *p = a->pipe, *q = b->pipe;
    if (mpz_cmp(a->n, b->n) != 0 || mpz_cmp(a->cof, b->cof) != 0 || a->factor_count != b->factor_count ||
        a->ecm_digits != b->ecm_digits || a->work_limit != b->work_limit || a->bpsw_digits != b->bpsw_digits ||
        a->mode != b->mode || a->next != b->next)
        return 0;
    for (size_t i = 0; i < a->factor_count; i++)
        if (mpz_cmp(a->factors[i].prime, b->factors[i].prime) != 0 ||
            a->factors[i].exponent != b->factors[i].exponent)
            return 0;
    if (p->count != q->count || p->share_count != q->share_count || p->share_base_curve != q->share_base_curve ||
        p->share_base_curves != q->share_base_curves || p->share_base_work != q->share_base_work ||
        p->share_allowance != q->share_allowance || p->start_bits != q->start_bits)
        return 0;
    for (size_t i = 0; i < p->count; i++) {
        const pk_part *x = &p->parts[i], *y = &q->parts[i];
        if (mpz_cmp(x->v, y->v) != 0 || x->e != y->e || x->status != y->status)
            return 0;
    }
    return 1;
}

int pk_pipe_share_check(pk_job *const *shares, size_t count)
{
    if (count < 2)
        return PK_E_OPTIONS;
    unsigned char *seen = calloc(count, 1);
    if (!seen)
        return PK_E_NOMEM;
    int rc = PK_OK, any_found = 0, all_over = 1;
    for (size_t k = 0; k < count && rc == PK_OK; k++) {
        const pk_job *s = shares[k];
        const struct pk_pipe *p = s->pipe;
        if (!p || p->share_count != count || p->share_index >= count || seen[p->share_index] ||
            !same_shared_job(shares[0], s)) {
            rc = PK_E_OPTIONS;
            break;
        }
        seen[p->share_index] = 1;
        int end = share_end(s);
        any_found |= end == 1;
        all_over &= end != 0;
    }
    free(seen);
    if (rc == PK_OK && !any_found && !all_over)
        rc = PK_E_NOT_DONE;
    return rc;
}

int pk_pipe_share_merge(pk_job *out, pk_job *const *shares, size_t count)
{
    struct pk_pipe *p = out->pipe;
    size_t i = current(p);
    pk_part *pt = &p->parts[i];
    uint64_t base = p->share_base_work, spent = 0, finished = 0, last_b1 = 0, last_b2 = 0;
    const pk_job *best = NULL;
    int short_of_work = 0, concluded = 0;
    double percent = out->percent;
    for (size_t k = 0; k < count; k++) {
        const pk_job *s = shares[k];
        const struct pk_pipe *q = s->pipe;
        spent += q->work - base;
        finished += q->ecm.curves;
        if (q->ecm.last_b1 > last_b1 || (q->ecm.last_b1 == last_b1 && q->ecm.last_b2 > last_b2)) {
            last_b1 = q->ecm.last_b1;
            last_b2 = q->ecm.last_b2;
        }
        int end = share_end(s);
        if (end == 1 && (!best || q->ecm.curve < best->pipe->ecm.curve))
            best = s; /* the factor of the earliest curve: the same whichever share ran faster */
        short_of_work |= end == 3;
        concluded |= s->concluded;
        if (s->percent > percent)
            percent = s->percent;
    }
    uint64_t own = p->work - base; /* share 0's clone counted its own work only */
    p->work = base + spent;
    pt->work = pt->work - own + spent;
    pk_ecm *e = &p->ecm;
    e->work = e->work - own + spent;
    e->stride = 0;
    e->curves = p->share_base_curves + finished;
    e->last_b1 = last_b1;
    e->last_b2 = last_b2;
    e->curve = share_end_curve(out);
    if (e->curve == UINT64_MAX || e->curve < e->curves)
        e->curve = e->curves;
    pk_ecm_level_of(e->curves, &e->level, &e->level_curves);
    e->phase = 0;
    e->b1done = 1;
    mpz_set_ui(e->x, 0);
    mpz_set_ui(e->z, 0);
    mpz_set_ui(e->a, 0);
    mpz_t f;
    mpz_init(f);
    if (best)
        mpz_set(f, best->pipe->share_factor);
    p->share_index = p->share_count = 0;
    p->share_base_curve = p->share_base_curves = p->share_base_work = p->share_allowance = 0;
    p->share_found = 0;
    mpz_set_ui(p->share_factor, 0);
    int rc = PK_OK;
    if (best)
        rc = split_found(out, i, f);
    else if (short_of_work || concluded)
        leave(p, i); /* a share spent its part of the work limit, or the job ends: the part is left */
    mpz_clear(f);
    if (concluded && !out->concluded) {
        out->concluded = 1;
        atomic_store_explicit(&out->conclude, 1, memory_order_relaxed);
    }
    if (percent > out->percent)
        out->percent = percent;
    out->revision++;
    return rc;
}

int pk_pipe_step(pk_job *job, uint64_t *budget)
{
    struct pk_pipe *p = job->pipe;
    if (p->share_count)
        return share_step(job, budget);
    for (;;) {
        size_t i = current(p);
        if (i == p->count) {
            finish(job);
            return PK_PATH_CONTINUE;
        }
        if (pk_job_poll(job) && !job->concluded)
            return PK_PATH_INTERRUPT;
        int rc = PK_OK;
        if (p->parts[i].status == PK_PART_NEW) {
            rc = examine(job, i);
        } else if (job->concluded) {
            leave(p, i); /* concluded: the split stops, its part is left */
        } else {
            if (*budget == 0)
                return PK_PATH_BUDGET;
            rc = split_stint(job, i, budget);
        }
        if (rc < 0)
            return rc;
        double pc = pk_pipe_percent(job);
        if (pc > job->percent)
            job->percent = pc;
    }
}

/* ---------------------------------------------------------------- progress */

uint64_t pk_pipe_work(const pk_job *job)
{
    return job->pipe ? job->pipe->work : 0;
}

double pk_pipe_percent(const pk_job *job)
{
    const struct pk_pipe *p = job->pipe;
    if (p->stage == PK_PIPE_DONE)
        return 100.0;
    double open = 0;
    for (size_t i = 0; i < p->count; i++)
        if (p->parts[i].status == PK_PART_NEW || p->parts[i].status == PK_PART_SPLIT)
            open += (double)p->parts[i].e * (double)mpz_sizeinbase(p->parts[i].v, 2);
    double start = p->start_bits ? (double)p->start_bits : 1.0;
    double f = 1.0 - open / start;
    if (f < 0)
        f = 0;
    double pc = PK_TRIAL_SHARE + (99.999 - PK_TRIAL_SHARE) * f;
    return pc > 99.999 ? 99.999 : pc;
}

const char *pk_pipe_stage(const pk_job *job, pk_progress *out)
{
    const struct pk_pipe *p = job->pipe;
    out->parts_left = p->count;
    out->stage_fraction = 0;
    if (p->stage == PK_PIPE_DONE) {
        out->stage_fraction = 1;
        return "done";
    }
    size_t i = current(p);
    if (i == p->count)
        return "done";
    if (p->parts[i].status == PK_PART_NEW)
        return "prime";
    if (p->split == PK_METHOD_ECM) {
        unsigned through = ecm_limit_levels(job);
        if (through > PK_ECM_LEVELS) { /* no limit: the level for a factor of half the part's digits */
            size_t d = (mpz_sizeinbase(p->parts[i].v, 10) + 1) / 2;
            through = 1;
            while (through < PK_ECM_LEVELS && pk_ecm_levels[through - 1].digits < d)
                through++;
        }
        out->stage_fraction = pk_ecm_fraction(&p->ecm, through - 1);
        const pk_ecm_level *level = &pk_ecm_levels[p->ecm.level < PK_ECM_LEVELS ? p->ecm.level : PK_ECM_LEVELS - 1];
        out->ecm_curve = p->ecm.level_curves + 1;
        out->ecm_curves = level->curves;
        out->ecm_b1 = level->b1;
        out->ecm_digits = level->digits;
        return "ecm";
    }
    if (p->split == PK_METHOD_QS) {
        out->stage_fraction = pk_qs_fraction(p->qs);
        return "qs";
    }
    double w = (double)pk_wsplit_work(&p->ws);
    double expect = (double)(UINT64_C(1) << (mpz_sizeinbase(p->parts[i].v, 2) / 4));
    out->stage_fraction = w / (w + expect);
    return "split";
}

/* ----------------------------------------------------------------- answers */

size_t pk_pipe_part_count(const pk_job *job)
{
    return job->pipe && job->done ? job->pipe->count : 0;
}

int pk_pipe_part(const pk_job *job, size_t index, char *buf, size_t cap, size_t *len, pk_part_info *info)
{
    if (!job->done)
        return PK_E_NOT_DONE;
    if (!job->pipe || index >= job->pipe->count)
        return PK_E_INDEX;
    const pk_part *pt = &job->pipe->parts[index];
    if (info) {
        if (info->size < offsetof(pk_part_info, method) + sizeof info->method)
            return PK_E_ARG;
        pk_part_info r;
        memset(&r, 0, sizeof r);
        r.size = info->size < sizeof r ? info->size : sizeof r;
        r.exponent = pt->e;
        r.trial_from = job->from;
        r.trial_bound = job->next - 1;
        r.work = pt->work;
        r.curves = pt->curves;
        r.b1 = pt->b1;
        r.b2 = pt->b2;
        r.ecm_digits = pt->digits;
        r.method = method_names[pt->method];
        memcpy(info, &r, r.size);
    }
    return pk_emit_mpz(pt->v, buf, cap, len);
}

/* -------------------------------------------------------------- checkpoint */

void pk_pipe_save(const pk_job *job, pk_sbuf *b)
{
    const struct pk_pipe *p = job->pipe;
    pk_sb_text(b, "stage ");
    pk_sb_text(b, !p ? "trial" : p->stage == PK_PIPE_DONE ? "done" : "split");
    pk_sb_text(b, "\npipe-work");
    pk_sb_u64_word(b, p ? p->work : 0);
    pk_sb_u64_word(b, p ? p->start_bits : 0);
    pk_sb_text(b, "\n");
    pk_sb_u64(b, "parts", p ? p->count : 0);
    for (size_t i = 0; p && i < p->count; i++) {
        const pk_part *pt = &p->parts[i];
        pk_sb_text(b, "part ");
        pk_sb_mpz(b, pt->v);
        pk_sb_u64_word(b, pt->e);
        pk_sb_text(b, " ");
        pk_sb_text(b, status_names[pt->status]);
        pk_sb_u64_word(b, pt->work);
        pk_sb_u64_word(b, pt->curves);
        pk_sb_u64_word(b, pt->b1);
        pk_sb_u64_word(b, pt->b2);
        pk_sb_u64_word(b, pt->digits);
        pk_sb_text(b, " ");
        pk_sb_text(b, method_names[pt->method]);
        pk_sb_text(b, "\n");
    }
    pk_sb_text(b, "split ");
    if (!p || p->split == PK_METHOD_NONE) {
        pk_sb_text(b, "none");
    } else if (p->split == PK_METHOD_WORD) {
        char text[512];
        size_t n = pk_wsplit_save(&p->ws, text, sizeof text);
        if (n >= sizeof text) {
            b->failed = 1; /* never: the state's text is short */
            return;
        }
        pk_sb_text(b, "word ");
        pk_sb_bytes(b, text, n);
    } else if (p->split == PK_METHOD_QS) {
        pk_sb_text(b, "qs"); /* a restore starts this part's QS again: same answer */
    } else {
        pk_sb_text(b, "ecm");
        pk_ecm_save(&p->ecm, b);
    }
    pk_sb_text(b, "\n");
    if (p && p->share_count) {
        pk_sb_text(b, "share");
        pk_sb_u64_word(b, p->share_index);
        pk_sb_u64_word(b, p->share_count);
        pk_sb_u64_word(b, p->share_base_curve);
        pk_sb_u64_word(b, p->share_base_curves);
        pk_sb_u64_word(b, p->share_base_work);
        pk_sb_u64_word(b, p->share_allowance);
        pk_sb_text(b, " ");
        pk_sb_mpz(b, p->share_factor);
        pk_sb_text(b, "\n");
    }
}

int pk_pipe_is_share(const pk_job *job)
{
    return job->pipe && job->pipe->share_count;
}

static int name_index(const char *const *names, int count, const char *w, size_t n)
{
    for (int i = 0; i < count; i++)
        if (strlen(names[i]) == n && memcmp(names[i], w, n) == 0)
            return i;
    return -1;
}

static int load_part(struct pk_pipe *p, const char *v, size_t n)
{
    const char *end = v + n, *w;
    size_t wl;
    mpz_t x;
    mpz_init(x);
    int rc = pk_next_word(&v, end, &w, &wl);
    if (rc == PK_OK)
        rc = pk_set_mpz(x, w, wl);
    uint64_t f[6];
    int status = -1, method = -1;
    if (rc == PK_OK && (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &f[0]) != PK_OK))
        rc = PK_E_CHECKPOINT;
    if (rc == PK_OK && (pk_next_word(&v, end, &w, &wl) != PK_OK || (status = name_index(status_names, 4, w, wl)) < 0))
        rc = PK_E_CHECKPOINT;
    for (int i = 1; i < 6 && rc == PK_OK; i++)
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &f[i]) != PK_OK)
            rc = PK_E_CHECKPOINT;
    if (rc == PK_OK && (pk_next_word(&v, end, &w, &wl) != PK_OK || (method = name_index(method_names, 4, w, wl)) < 0 ||
                        v != end))
        rc = PK_E_CHECKPOINT;
    if (rc == PK_OK) {
        /* Ascending, above 1, with an exponent; a level is one of the table's. */
        int level_ok = f[5] == 0;
        for (unsigned l = 0; l < PK_ECM_LEVELS; l++)
            level_ok |= f[5] == pk_ecm_levels[l].digits;
        if (mpz_cmp_ui(x, 2) < 0 || f[0] == 0 || !level_ok ||
            (p->count && mpz_cmp(p->parts[p->count - 1].v, x) >= 0))
            rc = PK_E_CHECKPOINT_STATE;
    }
    if (rc == PK_OK)
        rc = insert_part(p, x, f[0]);
    if (rc == PK_OK) {
        pk_part *pt = &p->parts[p->count - 1];
        pt->status = status;
        pt->method = method;
        pt->work = f[1];
        pt->curves = f[2];
        pt->b1 = f[3];
        pt->b2 = f[4];
        pt->digits = (unsigned)f[5];
    }
    mpz_clear(x);
    return rc;
}

/* The optional share line (version 3): "share <index> <count> <base-curve>
   <base-curves> <base-work> <allowance> <factor or 0>". */
static int load_share(struct pk_pipe *p, pk_reader *r)
{
    static const char key[] = "share ";
    if ((size_t)(r->end - r->p) < sizeof key - 1 || memcmp(r->p, key, sizeof key - 1) != 0)
        return PK_OK;
    if (!p)
        return PK_E_CHECKPOINT_STATE;
    const char *v, *w;
    size_t n, wl;
    int rc = pk_field(r, "share", &v, &n);
    if (rc != PK_OK)
        return rc;
    const char *end = v + n;
    uint64_t f[6];
    for (int i = 0; i < 6; i++)
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &f[i]) != PK_OK)
            return PK_E_CHECKPOINT;
    if (pk_next_word(&v, end, &w, &wl) != PK_OK || v != end)
        return PK_E_CHECKPOINT;
    if ((rc = pk_set_mpz(p->share_factor, w, wl)) != PK_OK)
        return rc;
    if (f[1] < 2 || f[0] >= f[1] || f[3] > f[2] || f[4] > p->work)
        return PK_E_CHECKPOINT_STATE;
    p->share_index = f[0];
    p->share_count = f[1];
    p->share_base_curve = f[2];
    p->share_base_curves = f[3];
    p->share_base_work = f[4];
    p->share_allowance = f[5];
    p->share_found = mpz_sgn(p->share_factor) != 0;
    return PK_OK;
}

int pk_pipe_load(pk_job *job, pk_reader *r, uint64_t version)
{
    const char *v;
    size_t n;
    int rc = pk_field(r, "stage", &v, &n);
    if (rc != PK_OK)
        return rc;
    static const char *const stages[] = {"trial", "split", "done"};
    int stage = name_index(stages, 3, v, n);
    uint64_t pw[2], count;
    if (stage < 0)
        return PK_E_CHECKPOINT;
    if ((rc = pk_field(r, "pipe-work", &v, &n)) != PK_OK || (rc = pk_parse_u64_list(v, n, pw, 2)) != PK_OK ||
        (rc = pk_field_u64(r, "parts", &count)) != PK_OK)
        return rc;
    if (count > (uint64_t)(r->end - r->p) / 10)
        return PK_E_CHECKPOINT;
    struct pk_pipe *p = NULL;
    if (stage > 0) {
        if (!(p = pipe_new()))
            return PK_E_NOMEM;
        p->stage = stage == 2 ? PK_PIPE_DONE : PK_PIPE_SPLIT;
        p->work = pw[0];
        p->start_bits = pw[1];
        job->pipe = p; /* freed with the job on any error */
    } else if (pw[0] || pw[1] || count) {
        return PK_E_CHECKPOINT_STATE;
    }
    for (uint64_t i = 0; i < count && rc == PK_OK; i++) {
        if ((rc = pk_field(r, "part", &v, &n)) == PK_OK)
            rc = load_part(p, v, n);
    }
    if (rc != PK_OK)
        return rc;
    if ((rc = pk_field(r, "split", &v, &n)) != PK_OK)
        return rc;
    const char *end = v + n, *w;
    size_t wl;
    if ((rc = pk_next_word(&v, end, &w, &wl)) != PK_OK)
        return rc;
    int split = name_index(split_names, 4, w, wl);
    if (split < 0 || (split == PK_METHOD_NONE || split == PK_METHOD_QS) != (v == end))
        return PK_E_CHECKPOINT;
    if (version >= 3 && (rc = load_share(p, r)) != PK_OK)
        return rc;
    if (!p)
        return split == PK_METHOD_NONE ? PK_OK : PK_E_CHECKPOINT_STATE;

    /* The parts against the core: their product is the cofactor, the
       pipeline started no smaller than it, and the statuses are ones the
       stages give (a split only on the current part, which has its state;
       parts split or left are composite; a finished pipeline has none open). */
    mpz_t prod, t;
    mpz_init_set_ui(prod, 1);
    mpz_init(t);
    for (size_t i = 0; i < p->count; i++) {
        mpz_pow_ui(t, p->parts[i].v, p->parts[i].e);
        mpz_mul(prod, prod, t);
        if (mpz_cmp(prod, job->cof) > 0)
            break;
    }
    int ok = mpz_cmp(prod, job->cof) == 0 && p->start_bits >= mpz_sizeinbase(job->cof, 2) &&
             p->start_bits <= mpz_sizeinbase(job->n, 2);
    mpz_clears(prod, t, NULL);
    if (!ok)
        return PK_E_CHECKPOINT_STATE;
    size_t cur = current(p);
    for (size_t i = 0; i < p->count; i++) {
        const pk_part *pt = &p->parts[i];
        if (pt->status == PK_PART_SPLIT && i != cur)
            return PK_E_CHECKPOINT_STATE;
        if ((pt->status == PK_PART_SPLIT || pt->status == PK_PART_LEFT) &&
            (mpz_sizeinbase(pt->v, 10) > job->bpsw_digits + 1 || pk_bpsw(pt->v) != 0 ||
             mpz_perfect_power_p(pt->v)))
            return PK_E_CHECKPOINT_STATE;
        if (pt->status == PK_PART_UNCLASSIFIED && pk_decimal_length(pt->v) <= job->bpsw_digits)
            return PK_E_CHECKPOINT_STATE;
        if (p->stage == PK_PIPE_DONE && (pt->status == PK_PART_NEW || pt->status == PK_PART_SPLIT))
            return PK_E_CHECKPOINT_STATE;
    }
    int has_split = cur < p->count && p->parts[cur].status == PK_PART_SPLIT;
    if (has_split != (split != PK_METHOD_NONE) || (has_split && p->parts[cur].method != split))
        return PK_E_CHECKPOINT_STATE;
    if (p->share_count) {
        /* A share: of an ECM split, with a factor of its part if any, within
           the work limit's allowance, of a job not done. */
        const mpz_srcptr m = p->parts[cur].v;
        if (split != PK_METHOD_ECM || p->stage != PK_PIPE_SPLIT ||
            (p->share_found && (mpz_cmp_ui(p->share_factor, 1) <= 0 || mpz_cmp(p->share_factor, m) >= 0 ||
                                !mpz_divisible_p(m, p->share_factor))) ||
            (!p->share_found && mpz_sgn(p->share_factor) != 0) || (p->share_allowance != 0) != (job->work_limit != 0) ||
            p->share_allowance > job->work_limit || p->share_base_curve > UINT64_MAX - p->share_count)
            return PK_E_CHECKPOINT_STATE;
    }
    if (split == PK_METHOD_ECM) {
        if (mpz_sizeinbase(p->parts[cur].v, 2) <= 128)
            return PK_E_CHECKPOINT_STATE;
        if (p->share_count)
            rc = pk_ecm_load_share(&p->ecm, p->parts[cur].v, v, end, p->share_base_curve + p->share_index,
                                   p->share_count);
        else
            rc = pk_ecm_load(&p->ecm, p->parts[cur].v, v, end);
        if (rc != PK_OK)
            return rc;
    } else if (split == PK_METHOD_WORD) {
        if (mpz_sizeinbase(p->parts[cur].v, 2) > 128)
            return PK_E_CHECKPOINT_STATE;
        const mpz_srcptr m = p->parts[cur].v;
        pk_u128 nn = ((pk_u128)mpz_getlimbn(m, 1) << 64) | mpz_getlimbn(m, 0);
        if (pk_wsplit_load(&p->ws, nn, v, (size_t)(end - v)) != 0)
            return PK_E_CHECKPOINT_STATE;
    } else if (split == PK_METHOD_QS) {
        size_t bits = mpz_sizeinbase(p->parts[cur].v, 2);
        if (bits < PK_QS_MIN_BITS || bits > PK_QS_MAX_BITS)
            return PK_E_CHECKPOINT_STATE;
        if (!(p->qs = pk_qs_new(p->parts[cur].v)))
            return PK_E_NOMEM;
    }
    p->split = split;
    return PK_OK;
}

int pk_pipe_check(pk_job *job)
{
    const struct pk_pipe *p = job->pipe;
    if (job->from != 2)
        return PK_E_CHECKPOINT_STATE; /* a complete job's trial division starts at 2 */
    if (!p) {
        /* Still in trial division, or ended by it with every factor listed. */
        return job->done && job->cof_status != PK_COFACTOR_ONE ? PK_E_CHECKPOINT_STATE : PK_OK;
    }
    if ((p->stage == PK_PIPE_DONE) != (job->done != 0))
        return PK_E_CHECKPOINT_STATE;
    /* Trial division is over before the pipeline starts (or was cut short
       by pk_job_conclude). */
    pk_job_refresh_bound(job);
    if (job->from > 2 || (job->next <= job->eff_bound && !job->concluded))
        return PK_E_CHECKPOINT_STATE;
    if (job->done) {
        int status = parts_status(p);
        if (status != job->cof_status)
            return PK_E_CHECKPOINT_STATE;
    }
    return PK_OK;
}
