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
 * Version 2 (written for complete jobs; trial-division jobs keep writing
 * version 1, which says all there is about them) has the same lines, with a
 * certainty on each factor line and the later stages' lines before the
 * checksum:
 *   factor <prime> <exponent> <pk_certainty>
 *   ...
 *   mode <pk_mode>
 *   limits <ecm-digits> <work-limit>
 *   concluded 1          (only after pk_job_conclude was seen; absent otherwise)
 *   stage, pipe-work, parts, part..., split   (job/pipeline.h)
 *
 * Version 3 is written for a share of a job's ECM curves
 * (pk_job_ecm_share) only: version 2 with a share line after the split line
 * (job/pipeline.h). Other jobs keep writing versions 1 and 2.
 *
 * Lines end in "\n". Every field is required, in this order; restoring checks
 * the checksum first, then the syntax, then that the state is consistent.
 * Version 1 restores as a trial-division job.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"
#include "job/codec.h"
#include "job/pipeline.h"
#include "trial/trial.h"

#define PK_CHECKPOINT_MAGIC "primekit-checkpoint "
#define PK_CHECKPOINT_VERSION 3   /* the newest; 1 and 2 are still read */

static int render(const pk_job *job, pk_sbuf *out)
{
    pk_sbuf b = {0};
    char line[64];
    int version = pk_pipe_is_share(job) ? 3 : job->mode == PK_MODE_COMPLETE ? 2 : 1;
    snprintf(line, sizeof line, PK_CHECKPOINT_MAGIC "%d\n", version);
    pk_sb_text(&b, line);
    pk_sb_text(&b, "candidate ");
    if (job->n_text)
        pk_sb_text(&b, job->n_text);
    else
        pk_sb_mpz(&b, job->n);
    pk_sb_text(&b, "\n");
    pk_sb_u64(&b, "from", job->from);
    pk_sb_u64(&b, "bound", job->bound);
    pk_sb_u64(&b, "bpsw-digits", job->bpsw_digits);
    pk_sb_u64(&b, "next", job->next);
    pk_sb_u64(&b, "tested", job->tested);
    pk_sb_u64(&b, "work", job->work);
    uint64_t bits;
    memcpy(&bits, &job->percent, sizeof bits);
    snprintf(line, sizeof line, "percent %016llx\n", (unsigned long long)bits);
    pk_sb_text(&b, line);
    pk_sb_u64(&b, "done", (uint64_t)job->done);
    pk_sb_u64(&b, "status", job->done ? (uint64_t)job->cof_status : 0);
    pk_sb_u64(&b, "factors", job->factor_count);
    for (size_t i = 0; i < job->factor_count; i++) {
        pk_sb_text(&b, "factor ");
        pk_sb_mpz(&b, job->factors[i].prime);
        pk_sb_u64_word(&b, job->factors[i].exponent);
        if (version >= 2)
            pk_sb_u64_word(&b, (uint64_t)job->factors[i].certainty);
        pk_sb_text(&b, "\n");
    }
    pk_sb_text(&b, "cofactor ");
    if (job->n_text && mpz_cmp(job->cof, job->n) == 0)
        pk_sb_text(&b, job->n_text);
    else
        pk_sb_mpz(&b, job->cof);
    pk_sb_text(&b, "\n");
    int open = job->win_open && job->win_pos > job->next;
    snprintf(line, sizeof line, "window %llu %llu %llu %llu\n",
             (unsigned long long)(open ? job->next : 0), (unsigned long long)(open ? job->win_pos : 0),
             (unsigned long long)(open ? job->win_tested : 0),
             (unsigned long long)(open ? job->win_work : 0));
    pk_sb_text(&b, line);
    pk_sb_text(&b, "window-residue ");
    if (open) {
        mpz_t res;
        mpz_init(res);
        pk_tdgmp_window_residue(job, res);
        pk_sb_mpz(&b, res);
        mpz_clear(res);
    } else {
        pk_sb_text(&b, "1");
    }
    pk_sb_text(&b, "\n");
    if (version >= 2) {
        pk_sb_u64(&b, "mode", (uint64_t)job->mode);
        snprintf(line, sizeof line, "limits %u %llu\n", job->ecm_digits, (unsigned long long)job->work_limit);
        pk_sb_text(&b, line);
        if (job->concluded)
            pk_sb_text(&b, "concluded 1\n");
        pk_pipe_save(job, &b);
    }
    if (!b.failed) {
        snprintf(line, sizeof line, "checksum %016llx\n", (unsigned long long)pk_fnv(b.s, b.len));
        pk_sb_text(&b, line);
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
    if (!job->concluded && pk_job_concluding(cache))
        cache->revision++; /* conclude arrived between steps: the text changes */
    if (!job->ckpt_text || job->ckpt_revision != job->revision) {
        pk_sbuf b;
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

size_t pk_checkpoint_checked_body(const char *text, size_t length)
{
    if (length < 2 || text[length - 1] != '\n')
        return 0;
    size_t last = length - 1;
    while (last > 0 && text[last - 1] != '\n')
        last--;
    const char *line = text + last;
    uint64_t want;
    if (length - 1 - last != 9 + 16 || memcmp(line, "checksum ", 9) != 0
        || parse_hex64(line + 9, 16, &want) != PK_OK || pk_fnv(text, last) != want)
        return 0;
    return last;
}

static int field_hex64(pk_reader *r, const char *key, uint64_t *out)
{
    const char *v;
    size_t n;
    int rc = pk_field(r, key, &v, &n);
    return rc != PK_OK ? rc : parse_hex64(v, n, out);
}

static int parse(pk_job *job, pk_reader *r, const pk_options *o, uint64_t version)
{
    const char *v;
    size_t n;
    int rc = pk_field(r, "candidate", &v, &n);
    if (rc != PK_OK)
        return rc;
    if (n > o->max_digits && pk_is_canonical_decimal(v, n))
        return PK_E_TOO_LARGE;
    if (!pk_is_canonical_decimal(v, n))
        return PK_E_CHECKPOINT;
    if ((rc = pk_job_set_candidate(job, v, n)) != PK_OK)
        return rc == PK_E_PARSE ? PK_E_CHECKPOINT : rc;
    uint64_t bpsw, percent, done, status, count;
    if ((rc = pk_field_u64(r, "from", &job->from)) != PK_OK ||
        (rc = pk_field_u64(r, "bound", &job->bound)) != PK_OK ||
        (rc = pk_field_u64(r, "bpsw-digits", &bpsw)) != PK_OK ||
        (rc = pk_field_u64(r, "next", &job->next)) != PK_OK ||
        (rc = pk_field_u64(r, "tested", &job->tested)) != PK_OK ||
        (rc = pk_field_u64(r, "work", &job->work)) != PK_OK ||
        (rc = field_hex64(r, "percent", &percent)) != PK_OK ||
        (rc = pk_field_u64(r, "done", &done)) != PK_OK ||
        (rc = pk_field_u64(r, "status", &status)) != PK_OK ||
        (rc = pk_field_u64(r, "factors", &count)) != PK_OK)
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
        rc = pk_field(r, "factor", &v, &n);
        if (rc != PK_OK)
            break;
        const char *end = v + n, *w;
        size_t wl;
        uint64_t e, certainty = PK_CERTAINTY_PROVEN;
        if ((rc = pk_next_word(&v, end, &w, &wl)) != PK_OK || (rc = pk_set_mpz(p, w, wl)) != PK_OK)
            break;
        if (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &e) != PK_OK ||
            (version >= 2 && (pk_next_word(&v, end, &w, &wl) != PK_OK || pk_word_u64(w, wl, &certainty) != PK_OK)) ||
            v != end) {
            rc = PK_E_CHECKPOINT;
            break;
        }
        if (e == 0 || mpz_cmp_ui(p, 2) < 0 || certainty > PK_CERTAINTY_PROBABLE ||
            (job->factor_count && mpz_cmp(job->factors[job->factor_count - 1].prime, p) >= 0)) {
            rc = PK_E_CHECKPOINT_STATE;
            break;
        }
        rc = pk_job_add_prime(job, p, e, (int)certainty);
    }
    mpz_clear(p);
    if (rc != PK_OK)
        return rc;
    if ((rc = pk_field(r, "cofactor", &v, &n)) != PK_OK)
        return rc;
    if ((rc = pk_set_mpz(job->cof, v, n)) != PK_OK)
        return rc;
    uint64_t w[4];
    if ((rc = pk_field(r, "window", &v, &n)) != PK_OK || (rc = pk_parse_u64_list(v, n, w, 4)) != PK_OK)
        return rc;
    if ((rc = pk_field(r, "window-residue", &v, &n)) != PK_OK)
        return rc;
    mpz_t res;
    mpz_init(res);
    rc = pk_set_mpz(res, v, n);
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
    job->mode = PK_MODE_TRIAL;
    if (version >= 2) {
        uint64_t mode, lim[2];
        if ((rc = pk_field_u64(r, "mode", &mode)) != PK_OK || (rc = pk_field(r, "limits", &v, &n)) != PK_OK ||
            (rc = pk_parse_u64_list(v, n, lim, 2)) != PK_OK)
            return rc;
        if (mode > PK_MODE_TRIAL || lim[0] > 70)
            return PK_E_CHECKPOINT_STATE;
        job->mode = (int)mode;
        job->ecm_digits = (unsigned)lim[0];
        job->work_limit = lim[1];
        static const char ckey[] = "concluded ";
        if ((size_t)(r->end - r->p) >= sizeof ckey - 1 && memcmp(r->p, ckey, sizeof ckey - 1) == 0) {
            uint64_t c;
            if ((rc = pk_field_u64(r, "concluded", &c)) != PK_OK)
                return rc;
            if (c != 1 || job->mode != PK_MODE_COMPLETE)
                return PK_E_CHECKPOINT_STATE;
            job->concluded = 1;
            atomic_store_explicit(&job->conclude, 1, memory_order_relaxed);
        }
        if ((rc = pk_pipe_load(job, r, version)) != PK_OK)
            return rc;
        if (job->pipe && (w[0] != 0 || job->mode != PK_MODE_COMPLETE))
            return PK_E_CHECKPOINT_STATE; /* the window is trial division's */
    }
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
        int prime = pk_bpsw(f->prime);
        if (prime == 0 || f->exponent > mpz_sizeinbase(job->n, 2)) {
            rc = PK_E_CHECKPOINT_STATE;
            break;
        }
        /* Probable means a BPSW pass above 2^64; proven above 2^64 is trial division's proof. */
        if (f->certainty == PK_CERTAINTY_PROBABLE ? prime != 1
                                                  : prime == 1 && !pk_job_trial_proves(job, f->prime)) {
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
    if (rc == PK_OK && job->mode == PK_MODE_COMPLETE)
        rc = pk_pipe_check(job);
    if (rc == PK_OK && job->mode == PK_MODE_TRIAL && job->done && mpz_cmp_ui(job->cof, 1) != 0) {
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
    if (version < 1 || version > PK_CHECKPOINT_VERSION)
        return PK_E_CHECKPOINT_VERSION;

    /* Checksum: the last line. */
    size_t last = pk_checkpoint_checked_body(text, length);
    if (last == 0)
        return PK_E_CHECKPOINT;

    pk_job *job = pk_job_alloc();
    if (!job)
        return PK_E_NOMEM;
    pk_reader r = {nl + 1, text + last};
    rc = parse(job, &r, &o, version);
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

int pk_job_clone(const pk_job *job, pk_job **out)
{
    pk_sbuf b;
    int rc = render(job, &b);
    if (rc != PK_OK)
        return rc;
    pk_options o;
    pk_options_init(&o);
    o.max_digits = job->max_digits;
    o.cache = job->cache;
    rc = pk_job_restore(b.s, b.len, &o, out);
    free(b.s);
    if (rc == PK_OK)
        (*out)->dispatch = job->dispatch;
    return rc;
}
