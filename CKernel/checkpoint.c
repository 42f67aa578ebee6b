/*
 * checkpoint.c — the portable text form of a job.
 *
 *   primekit-checkpoint 1
 *   candidate <decimal>
 *   from <u64>
 *   bound <u64>
 *   bpsw-digits <u64>
 *   next <u64>
 *   tested <u64>
 *   work <u64>
 *   percent-ppm <0..100000000>
 *   done <0|1>
 *   status <pk_cofactor_status, 0 unless done>
 *   factors <count>
 *   factor <prime> <exponent>      (count lines, ascending)
 *   cofactor <decimal>
 *   window-from <u64: start of an open accumulate window, 0 when none>
 *   accumulator <decimal: product of the window's primes mod cofactor, 1 when none>
 *   checksum <16 lower-case hex digits: FNV-1a 64 of every byte before this line>
 *
 * Lines end in "\n". Every field is required, in this order; restoring checks
 * the checksum first, then the syntax, then that the state is consistent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

#define PK_CHECKPOINT_MAGIC "primekit-checkpoint "
#define PK_CHECKPOINT_VERSION 1

static uint64_t fnv1a(const char *s, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

typedef struct sbuf {
    char *s;
    size_t len, cap;
    int failed;
} sbuf;

static void sb_reserve(sbuf *b, size_t more)
{
    if (b->failed || b->len + more + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1)
        cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
        b->failed = 1;
        return;
    }
    b->s = s;
    b->cap = cap;
}

static void sb_text(sbuf *b, const char *t)
{
    size_t n = strlen(t);
    sb_reserve(b, n);
    if (b->failed)
        return;
    memcpy(b->s + b->len, t, n + 1);
    b->len += n;
}

static void sb_u64(sbuf *b, const char *key, uint64_t v)
{
    char line[64];
    snprintf(line, sizeof line, "%s %llu\n", key, (unsigned long long)v);
    sb_text(b, line);
}

static void sb_mpz(sbuf *b, const mpz_t v)
{
    sb_reserve(b, mpz_sizeinbase(v, 10) + 1);
    if (b->failed)
        return;
    mpz_get_str(b->s + b->len, 10, v);
    b->len += strlen(b->s + b->len);
}

int pk_job_checkpoint(const pk_job *job, char *buf, size_t cap, size_t *len)
{
    if (!job)
        return PK_E_ARG;
    sbuf b = {0};
    char line[64];
    snprintf(line, sizeof line, PK_CHECKPOINT_MAGIC "%d\n", PK_CHECKPOINT_VERSION);
    sb_text(&b, line);
    sb_text(&b, "candidate ");
    sb_mpz(&b, job->n);
    sb_text(&b, "\n");
    sb_u64(&b, "from", job->from);
    sb_u64(&b, "bound", job->bound);
    sb_u64(&b, "bpsw-digits", job->bpsw_digits);
    sb_u64(&b, "next", job->next);
    sb_u64(&b, "tested", job->tested);
    sb_u64(&b, "work", job->work);
    sb_u64(&b, "percent-ppm", (uint64_t)(job->percent * 1e6));
    sb_u64(&b, "done", (uint64_t)job->done);
    sb_u64(&b, "status", job->done ? (uint64_t)job->cof_status : 0);
    sb_u64(&b, "factors", job->factor_count);
    for (size_t i = 0; i < job->factor_count; i++) {
        sb_text(&b, "factor ");
        sb_mpz(&b, job->factors[i].prime);
        snprintf(line, sizeof line, " %llu\n", (unsigned long long)job->factors[i].exponent);
        sb_text(&b, line);
    }
    sb_text(&b, "cofactor ");
    sb_mpz(&b, job->cof);
    sb_text(&b, "\n");
    int open = job->acc_from != PK_ACC_IDLE;
    sb_u64(&b, "window-from", open ? job->acc_from : 0);
    sb_text(&b, "accumulator ");
    if (open)
        sb_mpz(&b, job->acc);
    else
        sb_text(&b, "1");
    sb_text(&b, "\n");
    if (!b.failed) {
        snprintf(line, sizeof line, "checksum %016llx\n", (unsigned long long)fnv1a(b.s, b.len));
        sb_text(&b, line);
    }
    int rc = b.failed ? PK_E_NOMEM : pk_emit(b.s, b.len, buf, cap, len);
    free(b.s);
    return rc;
}

/* ------------------------------------------------------------ restore */

typedef struct reader {
    const char *p, *end;
} reader;

/* Read "key " and return the value up to the end of the line. */
static int field(reader *r, const char *key, const char **val, size_t *vlen)
{
    size_t k = strlen(key);
    if ((size_t)(r->end - r->p) < k + 1 || memcmp(r->p, key, k) != 0 || r->p[k] != ' ')
        return PK_E_CHECKPOINT;
    const char *v = r->p + k + 1;
    const char *nl = memchr(v, '\n', (size_t)(r->end - v));
    if (!nl)
        return PK_E_CHECKPOINT;
    *val = v;
    *vlen = (size_t)(nl - v);
    r->p = nl + 1;
    return PK_OK;
}

static int field_u64(reader *r, const char *key, uint64_t *out)
{
    const char *v;
    size_t n;
    int rc = field(r, key, &v, &n);
    if (rc != PK_OK)
        return rc;
    if (!pk_is_canonical_decimal(v, n) || n > 20)
        return PK_E_CHECKPOINT;
    uint64_t x;
    if (pk_parse_u64_saturating(v, n, &x) != PK_OK || x == PK_U64_MAX)
        return PK_E_CHECKPOINT;
    *out = x;
    return PK_OK;
}

static int set_mpz(mpz_t z, const char *v, size_t n)
{
    if (!pk_is_canonical_decimal(v, n))
        return PK_E_CHECKPOINT;
    char *tmp = malloc(n + 1);
    if (!tmp)
        return PK_E_NOMEM;
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    int ok = mpz_set_str(z, tmp, 10) == 0;
    free(tmp);
    return ok ? PK_OK : PK_E_CHECKPOINT;
}

static int parse(pk_job *job, reader *r, const pk_options *o)
{
    const char *v;
    size_t n;
    int rc = field(r, "candidate", &v, &n);
    if (rc != PK_OK)
        return rc;
    if (n > o->max_digits && pk_is_canonical_decimal(v, n))
        return PK_E_TOO_LARGE;
    if ((rc = set_mpz(job->n, v, n)) != PK_OK)
        return rc;
    uint64_t bpsw, percent, done, status, count;
    if ((rc = field_u64(r, "from", &job->from)) != PK_OK ||
        (rc = field_u64(r, "bound", &job->bound)) != PK_OK ||
        (rc = field_u64(r, "bpsw-digits", &bpsw)) != PK_OK ||
        (rc = field_u64(r, "next", &job->next)) != PK_OK ||
        (rc = field_u64(r, "tested", &job->tested)) != PK_OK ||
        (rc = field_u64(r, "work", &job->work)) != PK_OK ||
        (rc = field_u64(r, "percent-ppm", &percent)) != PK_OK ||
        (rc = field_u64(r, "done", &done)) != PK_OK ||
        (rc = field_u64(r, "status", &status)) != PK_OK ||
        (rc = field_u64(r, "factors", &count)) != PK_OK)
        return rc;
    if (bpsw > SIZE_MAX)
        return PK_E_CHECKPOINT_STATE;
    job->bpsw_digits = (size_t)bpsw;
    job->max_digits = o->max_digits;
    if (percent > 100000000 || done > 1 || status > PK_COFACTOR_UNKNOWN)
        return PK_E_CHECKPOINT_STATE;
    job->percent = (double)percent / 1e6;
    job->done = (int)done;
    job->cof_status = (int)status;
    /* Each factor line is at least 10 bytes: a count beyond that is corrupt. */
    if (count > (uint64_t)(r->end - r->p) / 10)
        return PK_E_CHECKPOINT;

    mpz_t p;
    mpz_init(p);
    for (uint64_t i = 0; i < count && rc == PK_OK; i++) {
        rc = field(r, "factor", &v, &n);
        if (rc != PK_OK)
            break;
        const char *sp = memchr(v, ' ', n);
        if (!sp) {
            rc = PK_E_CHECKPOINT;
            break;
        }
        size_t plen = (size_t)(sp - v), elen = n - plen - 1;
        uint64_t e;
        if ((rc = set_mpz(p, v, plen)) != PK_OK)
            break;
        if (!pk_is_canonical_decimal(sp + 1, elen) || elen > 20 ||
            pk_parse_u64_saturating(sp + 1, elen, &e) != PK_OK || e == PK_U64_MAX) {
            rc = PK_E_CHECKPOINT;
            break;
        }
        if (e == 0 || mpz_cmp_ui(p, 2) < 0 ||
            (job->factor_count && mpz_cmp(job->factors[job->factor_count - 1].prime, p) >= 0)) {
            rc = PK_E_CHECKPOINT_STATE;
            break;
        }
        rc = pk_job_add_factor(job, p, e);
    }
    mpz_clear(p);
    if (rc != PK_OK)
        return rc;
    if ((rc = field(r, "cofactor", &v, &n)) != PK_OK)
        return rc;
    if ((rc = set_mpz(job->cof, v, n)) != PK_OK)
        return rc;
    uint64_t window;
    if ((rc = field_u64(r, "window-from", &window)) != PK_OK)
        return rc;
    job->acc_from = window ? window : PK_ACC_IDLE;
    if ((rc = field(r, "accumulator", &v, &n)) != PK_OK)
        return rc;
    if ((rc = set_mpz(job->acc, v, n)) != PK_OK)
        return rc;
    return r->p == r->end ? PK_OK : PK_E_CHECKPOINT;
}

/* The state must be one a job could have reached. */
static int validate(pk_job *job)
{
    if (mpz_cmp_ui(job->n, 2) < 0 || mpz_sgn(job->cof) <= 0)
        return PK_E_CHECKPOINT_STATE;
    if (job->from < 2 || job->from > job->bound || job->bound > PK_BOUND_MAX)
        return PK_E_CHECKPOINT_STATE;
    if (job->next < job->from || job->next > job->bound + 1)
        return PK_E_CHECKPOINT_STATE;
    if (job->done && (job->cof_status == PK_COFACTOR_ONE) != (mpz_cmp_ui(job->cof, 1) == 0))
        return PK_E_CHECKPOINT_STATE;
    if (job->acc_from == PK_ACC_IDLE ? mpz_cmp_ui(job->acc, 1) != 0
                                     : job->acc_from < job->from || job->acc_from > job->next ||
                                           job->done || mpz_sgn(job->acc) <= 0 ||
                                           mpz_cmp(job->acc, job->cof) >= 0)
        return PK_E_CHECKPOINT_STATE;
    int rc = PK_OK;
    mpz_t prod;
    mpz_init_set(prod, job->cof);
    for (size_t i = 0; i < job->factor_count && rc == PK_OK; i++) {
        const pk_factor *f = &job->factors[i];
        if (pk_bpsw(f->prime) == 0 || f->exponent > mpz_sizeinbase(job->n, 2)) {
            rc = PK_E_CHECKPOINT_STATE;
            break;
        }
        for (uint64_t e = 0; e < f->exponent; e++)
            mpz_mul(prod, prod, f->prime);
        if (mpz_cmp(prod, job->n) > 0)
            rc = PK_E_CHECKPOINT_STATE;
    }
    if (rc == PK_OK && mpz_cmp(prod, job->n) != 0)
        rc = PK_E_CHECKPOINT_STATE;
    mpz_clear(prod);
    return rc;
}

int pk_job_restore(const char *text, size_t length, const pk_options *options, pk_job **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (!text)
        return PK_E_ARG;
    pk_options o;
    int rc = pk_options_resolve(options, &o);
    if (rc != PK_OK)
        return rc;

    /* Header and version. */
    size_t mlen = strlen(PK_CHECKPOINT_MAGIC);
    if (length < mlen || memcmp(text, PK_CHECKPOINT_MAGIC, mlen) != 0)
        return PK_E_CHECKPOINT;
    const char *nl = memchr(text, '\n', length);
    if (!nl)
        return PK_E_CHECKPOINT;
    const char *ver = text + mlen;
    size_t vlen = (size_t)(nl - ver);
    uint64_t version;
    if (vlen == 0 || vlen > 9 || pk_parse_u64_saturating(ver, vlen, &version) != PK_OK)
        return PK_E_CHECKPOINT;
    if (version != PK_CHECKPOINT_VERSION)
        return PK_E_CHECKPOINT_VERSION;

    /* Checksum: the last line. */
    if (length < 2 || text[length - 1] != '\n')
        return PK_E_CHECKPOINT;
    size_t last = length - 1;
    while (last > 0 && text[last - 1] != '\n')
        last--;
    const char *ck = text + last;
    size_t cklen = length - 1 - last;
    if (cklen != 9 + 16 || memcmp(ck, "checksum ", 9) != 0)
        return PK_E_CHECKPOINT;
    uint64_t want = 0;
    for (size_t i = 9; i < cklen; i++) {
        char c = ck[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return PK_E_CHECKPOINT;
        want = want << 4 | (uint64_t)d;
    }
    if (fnv1a(text, last) != want)
        return PK_E_CHECKPOINT;

    pk_job *job = pk_job_alloc();
    if (!job)
        return PK_E_NOMEM;
    reader r = {nl + 1, text + last};
    rc = parse(job, &r, &o);
    if (rc == PK_OK)
        rc = validate(job);
    if (rc != PK_OK) {
        pk_job_destroy(job);
        return rc;
    }
    pk_dispatch_select(o.simd, &job->dispatch);
    pk_job_refresh_bound(job);
    *out = job;
    return PK_OK;
}
