/*
 * fuzz_candidate — pk_job_create on arbitrary candidate text and options.
 *
 * Input: 4 header bytes, then the candidate (bytes up to the first NUL).
 *   byte 0  bits 0-1 from mode, bits 2-3 bound mode, bit 4 small bpsw_digits,
 *           bit 5 small max_digits, bits 6-7 simd
 *   byte 1  from value selector, byte 2 bound value selector
 *   byte 3  budget exponent (low 4 bits) and step count (high 4 bits)
 * Properties: create returns PK_OK or a documented error and leaves *out NULL
 * on error; a job is stepped a bounded number of times and, after every step,
 * satisfies fz_check_job (factors prime, product equals the candidate, result
 * and progress agree); percent never decreases; the checkpoint round trip is
 * stable; a candidate of at most 12 digits over the default range is run to
 * the end, and one of at most 18 digits that finished is completely factored.
 */
#include "fuzz_common.h"

/* Option strings that are not plain numbers, or sit on the edges. */
static const char *const edge_strings[] = {
    "",         "0",        "1",        "2",          "3",          "01",
    "-1",       "+5",       " 7",       "7 ",         "1e9",        "0x10",
    "18446744073709486079", "18446744073709486080", "18446744073709486081",
    "18446744073709551615", "18446744073709551616", "99999999999999999999999999",
    "4294967296", "4294967295", "65536", "1048576", "1048575", "536870912",
};
#define EDGE_COUNT (sizeof edge_strings / sizeof edge_strings[0])

static const char *option_text(unsigned mode, unsigned sel, char *scratch, size_t cap)
{
    switch (mode & 3) {
    case 0:
        return NULL;
    case 1: /* small: 0 .. 65025 */
        snprintf(scratch, cap, "%u", sel * sel);
        return scratch;
    case 2: /* large: near 2^20, 2^32 and the top of the divisor range */
        if (sel < 86)
            snprintf(scratch, cap, "%llu", (unsigned long long)((UINT64_C(1) << 20) + sel * 977));
        else if (sel < 172)
            snprintf(scratch, cap, "%llu", (unsigned long long)((UINT64_C(1) << 32) - 200 + sel));
        else
            snprintf(scratch, cap, "%llu", (unsigned long long)(UINT64_C(0xFFFFFFFFFFFF0000) - 300 + sel));
        return scratch;
    default:
        return edge_strings[sel % EDGE_COUNT];
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    uint8_t flags = data[0];
    char *cand = malloc(size - 4 + 1);
    if (!cand)
        return 0;
    memcpy(cand, data + 4, size - 4);
    cand[size - 4] = '\0'; /* an embedded NUL ends the candidate early */
    size_t digits = strlen(cand);

    char from_buf[32], bound_buf[32];
    pk_options opt;
    pk_options_init(&opt);
    opt.from = option_text(flags, data[1], from_buf, sizeof from_buf);
    opt.bound = option_text(flags >> 2, data[2], bound_buf, sizeof bound_buf);
    if (flags & 0x10)
        opt.bpsw_digits = data[2] % 48;
    if (flags & 0x20)
        opt.max_digits = 1 + data[1] % 40;
    opt.simd = flags >> 6;

    pk_job *job = (pk_job *)&opt; /* must be overwritten */
    int rc = pk_job_create(cand, &opt, &job);
    if (rc != PK_OK) {
        FZ_CHECK(job == NULL, "*out not NULL after %s", pk_status_name(rc));
        FZ_CHECK(rc == PK_E_PARSE || rc == PK_E_RANGE || rc == PK_E_TOO_LARGE || rc == PK_E_OPTIONS,
                 "pk_job_create returned %s", pk_status_name(rc));
        /* A canonical candidate within the limits is refused only for its options or range. */
        if (fz_is_canonical(cand) && digits <= opt.max_digits)
            FZ_CHECK(rc != PK_E_PARSE && rc != PK_E_TOO_LARGE, "canonical %s refused: %s", cand,
                     pk_status_name(rc));
        if (!fz_is_canonical(cand))
            FZ_CHECK(rc == PK_E_PARSE, "non-canonical candidate gave %s", pk_status_name(rc));
        free(cand);
        return 0;
    }
    FZ_CHECK(job != NULL && fz_is_canonical(cand) && digits <= opt.max_digits,
             "accepted candidate \"%s\"", cand);

    uint64_t budget = UINT64_C(1) << (data[3] & 15); /* 1 .. 32768 units */
    unsigned steps = fz_skip_steps(job) ? 0 : 1 + (data[3] >> 4);
    double last = 0.0;
    int done = 0;
    for (unsigned i = 0; i < steps && !done; i++) {
        rc = pk_job_step(job, budget);
        FZ_CHECK(rc == PK_MORE || rc == PK_DONE, "pk_job_step returned %s", pk_status_name(rc));
        done = fz_check_job(job);
        FZ_CHECK(done == (rc == PK_DONE), "step returned %s but done is %d", pk_status_name(rc), done);
        pk_progress pr;
        memset(&pr, 0, sizeof pr);
        pr.size = sizeof pr;
        pk_job_progress(job, &pr);
        FZ_CHECK(pr.percent >= last, "percent went down: %g -> %g", last, pr.percent);
        last = pr.percent;
    }
    fz_check_round_trip(job, &opt);

    /* Small candidates over the default range: run to the end (sqrt <= 10^6). */
    int default_range = opt.from == NULL && opt.bound == NULL;
    if (!done && default_range && digits <= 12) {
        rc = pk_job_step(job, UINT64_MAX);
        FZ_CHECK(rc == PK_DONE, "unbounded step returned %s", pk_status_name(rc));
        done = fz_check_job(job);
    }
    if (done && default_range && digits <= 18) {
        /* Trial division to floor(sqrt(n)) from 2 leaves 1: every factor is listed. */
        pk_result res;
        memset(&res, 0, sizeof res);
        res.size = sizeof res;
        FZ_CHECK(pk_job_result(job, &res) == PK_OK && res.cofactor_status == PK_COFACTOR_ONE &&
                     res.complete && res.certainty == PK_CERTAINTY_PROVEN,
                 "%s not completely factored (status %d)", cand, res.cofactor_status);
        /* Cross-check the product in 128-bit arithmetic too. */
        unsigned __int128 n = 0, prod = 1;
        for (const char *p = cand; *p; p++)
            n = n * 10 + (unsigned)(*p - '0');
        for (size_t i = 0; i < res.factor_count; i++) {
            char f[32];
            uint64_t e = 0;
            FZ_CHECK(pk_job_factor(job, i, f, sizeof f, NULL, &e) == PK_OK, "factor %zu", i);
            unsigned __int128 p = strtoull(f, NULL, 10);
            while (e--)
                prod *= p;
        }
        FZ_CHECK(prod == n, "product of the factors of %s differs (128-bit check)", cand);
    }
    if (done)
        FZ_CHECK(pk_job_step(job, 0) == PK_DONE, "a finished job stepped again is not PK_DONE");
    fz_check_round_trip(job, &opt);
    pk_job_destroy(job);
    free(cand);
    return 0;
}
