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
 *   percent <16 hex digits: the IEEE-754 bits of the percentage, 0..100>
 *   done <0|1>
 *   status <pk_cofactor_status, 0 unless done>
 *   factors <count>
 *   factor <prime> <exponent>      (count lines, ascending)
 *   cofactor <decimal>
 *   window <from> <to> <tested> <work>   (an open GMP window; 0 0 0 0 when none)
 *   window-residue <decimal: product of the window's primes mod cofactor; 1 when none>
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

uint64_t pk_checkpoint_checksum(const char *s, size_t n)
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

static int render(const pk_job *job, sbuf *out)
{
    sbuf b = {0};
    char line[64];
    snprintf(line, sizeof line, PK_CHECKPOINT_MAGIC "%d\n", PK_CHECKPOINT_VERSION);
    sb_text(&b, line);
    sb_text(&b, "candidate ");
    if (job->n_text)
        sb_text(&b, job->n_text);
    else
        sb_mpz(&b, job->n);
    sb_text(&b, "\n");
    sb_u64(&b, "from", job->from);
    sb_u64(&b, "bound", job->bound);
    sb_u64(&b, "bpsw-digits", job->bpsw_digits);
    sb_u64(&b, "next", job->next);
    sb_u64(&b, "tested", job->tested);
    sb_u64(&b, "work", job->work);
    uint64_t bits;
    memcpy(&bits, &job->percent, sizeof bits);
    snprintf(line, sizeof line, "percent %016llx\n", (unsigned long long)bits);
    sb_text(&b, line);
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
    if (job->n_text && mpz_cmp(job->cof, job->n) == 0)
        sb_text(&b, job->n_text);
    else
        sb_mpz(&b, job->cof);
    sb_text(&b, "\n");
    int open = job->win_open && job->win_pos > job->next;
    snprintf(line, sizeof line, "window %llu %llu %llu %llu\n",
             (unsigned long long)(open ? job->next : 0), (unsigned long long)(open ? job->win_pos : 0),
             (unsigned long long)(open ? job->win_tested : 0),
             (unsigned long long)(open ? job->win_work : 0));
    sb_text(&b, line);
    sb_text(&b, "window-residue ");
    if (open) {
        mpz_t res;
        mpz_init(res);
        pk_tdgmp_window_residue(job, res);
        sb_mpz(&b, res);
        mpz_clear(res);
    } else {
        sb_text(&b, "1");
    }
    sb_text(&b, "\n");
    if (!b.failed) {
        snprintf(line, sizeof line, "checksum %016llx\n", (unsigned long long)pk_checkpoint_checksum(b.s, b.len));
        sb_text(&b, line);
    }
    if (b.failed) {
        free(b.s);
        return PK_E_NOMEM;
    }
    *out = b;
    return PK_OK;
}

int pk_job_checkpoint(const pk_job *job, char *buf, size_t cap, size_t *len)
{
    if (!job)
        return PK_E_ARG;
    /* The text is a pure function of the job's state: render it once per
       revision (the cache is not shared between threads: see the header). */
    pk_job *cache = (pk_job *)job;
    if (!job->ckpt_text || job->ckpt_revision != job->revision) {
        sbuf b;
        int rc = render(job, &b);
        if (rc != PK_OK)
            return rc;
        free(cache->ckpt_text);
        cache->ckpt_text = b.s;
        cache->ckpt_len = b.len;
        cache->ckpt_revision = job->revision;
    }
    return pk_emit(job->ckpt_text, job->ckpt_len, buf, cap, len);
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

static int parse_hex64(const char *v, size_t n, uint64_t *out)
{
    if (n != 16)
        return PK_E_CHECKPOINT;
    uint64_t x = 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return PK_E_CHECKPOINT;
        x = x << 4 | (uint64_t)d;
    }
    *out = x;
    return PK_OK;
}

static int field_hex64(reader *r, const char *key, uint64_t *out)
{
    const char *v;
    size_t n;
    int rc = field(r, key, &v, &n);
    return rc != PK_OK ? rc : parse_hex64(v, n, out);
}

/* Split "a b c d" into exactly count canonical u64 values. */
static int parse_u64_list(const char *v, size_t n, uint64_t *out, int count)
{
    for (int i = 0; i < count; i++) {
        const char *sp = i + 1 < count ? memchr(v, ' ', n) : v + n;
        if (!sp)
            return PK_E_CHECKPOINT;
        size_t len = (size_t)(sp - v);
        if (!pk_is_canonical_decimal(v, len) || len > 20 ||
            pk_parse_u64_saturating(v, len, &out[i]) != PK_OK || out[i] == PK_U64_MAX)
            return PK_E_CHECKPOINT;
        if (i + 1 < count) {
            n -= len + 1;
            v = sp + 1;
        }
    }
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
    if (!pk_is_canonical_decimal(v, n))
        return PK_E_CHECKPOINT;
    if ((rc = pk_job_set_candidate(job, v, n)) != PK_OK)
        return rc == PK_E_PARSE ? PK_E_CHECKPOINT : rc;
    uint64_t bpsw, percent, done, status, count;
    if ((rc = field_u64(r, "from", &job->from)) != PK_OK ||
        (rc = field_u64(r, "bound", &job->bound)) != PK_OK ||
        (rc = field_u64(r, "bpsw-digits", &bpsw)) != PK_OK ||
        (rc = field_u64(r, "next", &job->next)) != PK_OK ||
        (rc = field_u64(r, "tested", &job->tested)) != PK_OK ||
        (rc = field_u64(r, "work", &job->work)) != PK_OK ||
        (rc = field_hex64(r, "percent", &percent)) != PK_OK ||
        (rc = field_u64(r, "done", &done)) != PK_OK ||
        (rc = field_u64(r, "status", &status)) != PK_OK ||
        (rc = field_u64(r, "factors", &count)) != PK_OK)
        return rc;
    if (bpsw > SIZE_MAX)
        return PK_E_CHECKPOINT_STATE;
    job->bpsw_digits = (size_t)bpsw;
    job->max_digits = o->max_digits;
    memcpy(&job->percent, &percent, sizeof job->percent);
    if (!(job->percent >= 0.0 && job->percent <= 100.0) || done > 1 || status > PK_COFACTOR_UNKNOWN ||
        (done == 1) != (job->percent == 100.0))
        return PK_E_CHECKPOINT_STATE;
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
    uint64_t w[4];
    if ((rc = field(r, "window", &v, &n)) != PK_OK || (rc = parse_u64_list(v, n, w, 4)) != PK_OK)
        return rc;
    if ((rc = field(r, "window-residue", &v, &n)) != PK_OK)
        return rc;
    mpz_t res;
    mpz_init(res);
    rc = set_mpz(res, v, n);
    if (rc == PK_OK && w[0] == 0) {
        if (w[1] || w[2] || w[3] || mpz_cmp_ui(res, 1) != 0)
            rc = PK_E_CHECKPOINT_STATE;
    } else if (rc == PK_OK) {
        if (w[0] != job->next || w[1] <= w[0] || w[1] > job->bound + 1 || job->done ||
            mpz_sgn(res) <= 0 || mpz_cmp(res, job->cof) >= 0)
            rc = PK_E_CHECKPOINT_STATE;
        else
            rc = pk_tdgmp_window_restore(job, w[1], w[2], w[3], res);
    }
    mpz_clear(res);
    if (rc != PK_OK)
        return rc;
    return r->p == r->end ? PK_OK : PK_E_CHECKPOINT;
}

/* The state must be one a job could have reached. */
static int validate(pk_job *job)
{
    if (mpz_cmp_ui(job->n, 2) < 0 || mpz_sgn(job->cof) <= 0)
        return PK_E_CHECKPOINT_STATE;
    /* from 2 with bound 1 is the default range of 2 and 3 (√n < 2): empty, and the job is done at once. */
    if (job->from < 2 || job->bound > PK_BOUND_MAX || (job->from > job->bound && job->from > 2))
        return PK_E_CHECKPOINT_STATE;
    if (job->next < job->from || job->next > job->bound + 1 + (job->from > job->bound))
        return PK_E_CHECKPOINT_STATE;
    if (job->done && (job->cof_status == PK_COFACTOR_ONE) != (mpz_cmp_ui(job->cof, 1) == 0))
        return PK_E_CHECKPOINT_STATE;
    if (!job->done && job->cof_status != PK_COFACTOR_ONE)  /* written as 0 until the job ends */
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
        /* A listed prime is divided out completely. */
        if (mpz_divisible_p(job->cof, f->prime))
            rc = PK_E_CHECKPOINT_STATE;
        if (mpz_cmp(prod, job->n) > 0)
            rc = PK_E_CHECKPOINT_STATE;
    }
    if (rc == PK_OK && mpz_cmp(prod, job->n) != 0)
        rc = PK_E_CHECKPOINT_STATE;
    mpz_clear(prod);
    /* A finished job's status is the one its end concluded from the same state (the BPSW test costs what it cost
       then); a cofactor that end would have proven prime would be in the factor list. */
    if (rc == PK_OK && job->done && mpz_cmp_ui(job->cof, 1) != 0) {
        int expected = pk_job_classify_cofactor(job);
        if (expected == PK_COFACTOR_ONE || expected != job->cof_status)
            rc = PK_E_CHECKPOINT_STATE;
    }
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
    uint64_t want;
    if (parse_hex64(ck + 9, 16, &want) != PK_OK || pk_checkpoint_checksum(text, last) != want)
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
    job->cache = o.cache;
    pk_job_refresh_bound(job);
    if (job->done)
        job->cof_digits = pk_decimal_length(job->cof);
    *out = job;
    return PK_OK;
}
