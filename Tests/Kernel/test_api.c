/*
 * test_api.c — the API surface: versions, status strings, argument and input
 * validation, the caller-buffer convention, divisor lists.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void test_version_macros_match_linked_library(void)
{
    pkt_say("checks: PK_VERSION_NUMBER == MAJOR*10000+MINOR*100+PATCH == pk_version_number(), "
            "pk_version_string() == \"MAJOR.MINOR.PATCH\"");
    PKT_CHECK(PK_VERSION_NUMBER == PK_VERSION_MAJOR * 10000 + PK_VERSION_MINOR * 100 + PK_VERSION_PATCH,
              "PK_VERSION_NUMBER formula");
    PKT_CHECK(pk_version_number() == (unsigned)PK_VERSION_NUMBER, "pk_version_number() = %u, header says %d",
              pk_version_number(), PK_VERSION_NUMBER);
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", PK_VERSION_MAJOR, PK_VERSION_MINOR, PK_VERSION_PATCH);
    const char *got = pk_version_string();
    PKT_CHECK(got && strcmp(got, want) == 0, "pk_version_string() = \"%s\", want \"%s\"", got ? got : "(null)",
              want);
    PKT_CHECK(got == pk_version_string(), "pk_version_string() is not a static string");
}

void test_status_names_and_messages_cover_every_code(void)
{
    static const struct { int code; const char *name; } codes[] = {
        {PK_OK, "PK_OK"},
        {PK_MORE, "PK_MORE"},
        {PK_DONE, "PK_DONE"},
        {PK_INTERRUPTED, "PK_INTERRUPTED"},
        {PK_E_ARG, "PK_E_ARG"},
        {PK_E_PARSE, "PK_E_PARSE"},
        {PK_E_RANGE, "PK_E_RANGE"},
        {PK_E_TOO_LARGE, "PK_E_TOO_LARGE"},
        {PK_E_OPTIONS, "PK_E_OPTIONS"},
        {PK_E_NOMEM, "PK_E_NOMEM"},
        {PK_E_BUFFER, "PK_E_BUFFER"},
        {PK_E_NOT_DONE, "PK_E_NOT_DONE"},
        {PK_E_INCOMPLETE, "PK_E_INCOMPLETE"},
        {PK_E_TOO_MANY, "PK_E_TOO_MANY"},
        {PK_E_INDEX, "PK_E_INDEX"},
        {PK_E_CHECKPOINT, "PK_E_CHECKPOINT"},
        {PK_E_CHECKPOINT_VERSION, "PK_E_CHECKPOINT_VERSION"},
        {PK_E_CHECKPOINT_STATE, "PK_E_CHECKPOINT_STATE"},
        {PK_E_INTERNAL, "PK_E_INTERNAL"},
        {PK_E_IO, "PK_E_IO"},
        {PK_E_CACHE_FILE, "PK_E_CACHE_FILE"},
    };
    size_t n = sizeof codes / sizeof codes[0];
    pkt_say("checks: pk_status_name/pk_status_message for all %zu codes, and for values that are not codes", n);
    /* The documented values never change. */
    PKT_CHECK(PK_OK == 0 && PK_MORE == 1 && PK_DONE == 2 && PK_INTERRUPTED == 3, "outcome values");
    PKT_CHECK(PK_E_ARG == -1 && PK_E_INTERNAL == -15 && PK_E_IO == -16 && PK_E_CACHE_FILE == -17, "error values");
    for (size_t i = 0; i < n; i++) {
        const char *name = pk_status_name(codes[i].code);
        const char *msg = pk_status_message(codes[i].code);
        PKT_CHECK(name && strcmp(name, codes[i].name) == 0, "pk_status_name(%d) = \"%s\", want \"%s\"",
                  codes[i].code, name ? name : "(null)", codes[i].name);
        PKT_CHECK(msg && strlen(msg) >= 5, "pk_status_message(%d) is missing or too short", codes[i].code);
        if (!msg) continue;
        for (size_t j = 0; j < i; j++) {
            const char *other = pk_status_message(codes[j].code);
            PKT_CHECK(!other || strcmp(msg, other) != 0, "%s and %s share the message \"%s\"", codes[i].name,
                      codes[j].name, msg);
        }
    }
    static const int not_codes[] = {4, 5, 100, -18, -100, 2147483647, -2147483647 - 1};
    for (size_t i = 0; i < sizeof not_codes / sizeof not_codes[0]; i++) {
        const char *name = pk_status_name(not_codes[i]);
        PKT_CHECK(name && strcmp(name, "PK_UNKNOWN_STATUS") == 0, "pk_status_name(%d) = \"%s\"", not_codes[i],
                  name ? name : "(null)");
        const char *msg = pk_status_message(not_codes[i]);
        PKT_CHECK(msg && *msg, "pk_status_message(%d) is empty", not_codes[i]);
    }
}

static pk_job *const SENTINEL = (pk_job *)&SENTINEL;

static void expect_create(const char *cand, const pk_options *o, int want, const char *label)
{
    pk_job *job = SENTINEL;
    int st = pk_job_create(cand, o, &job);
    PKT_CHECK_STATUS(st, want, label);
    if (want != PK_OK) PKT_CHECK(job == NULL, "%s: *out not set to NULL on error", label);
    if (st == PK_OK && job != SENTINEL) pk_job_destroy(job);
}

void test_create_rejects_bad_candidates_and_sets_out_to_null(void)
{
    pkt_say("checks: NULL, \"\", \"-5\", \"007\", \"1\", \"0\", \"12a\", \" 12\", ... and too many digits give "
            "their status with *out == NULL");
    static const struct { const char *s; int want; } cases[] = {
        {"", PK_E_PARSE},      {"-5", PK_E_PARSE},    {"007", PK_E_PARSE},  {"00", PK_E_PARSE},
        {"12a", PK_E_PARSE},   {" 12", PK_E_PARSE},   {"12 ", PK_E_PARSE},  {"+12", PK_E_PARSE},
        {"1e5", PK_E_PARSE},   {"12\n", PK_E_PARSE},  {"0x10", PK_E_PARSE}, {"1 2", PK_E_PARSE},
        {"-0", PK_E_PARSE},    {"1.0", PK_E_PARSE},   {"１２", PK_E_PARSE},
        {"1", PK_E_RANGE},     {"0", PK_E_RANGE},
        {"2", PK_OK},          {"12", PK_OK},         {"18446744073709551617", PK_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char label[80];
        snprintf(label, sizeof label, "pk_job_create(\"%s\")", cases[i].s);
        expect_create(cases[i].s, NULL, cases[i].want, label);
    }
    expect_create(NULL, NULL, PK_E_ARG, "pk_job_create(NULL)");
    PKT_CHECK_STATUS(pk_job_create("12", NULL, NULL), PK_E_ARG, "pk_job_create(out = NULL)");

    /* Digit limits: max_digits exactly, one over, and the default limit. */
    pk_options o;
    pk_options_init(&o);
    PKT_CHECK(o.max_digits == PK_DEFAULT_MAX_DIGITS, "default max_digits %zu", o.max_digits);
    o.max_digits = 20;
    o.bound = "1000";
    expect_create("12345678901234567890", &o, PK_OK, "20 digits, max_digits 20");
    expect_create("123456789012345678901", &o, PK_E_TOO_LARGE, "21 digits, max_digits 20");
    size_t huge = PK_DEFAULT_MAX_DIGITS + 1;
    char *big = malloc(huge + 1);
    memset(big, '7', huge);
    big[huge] = 0;
    big[0] = '1';
    expect_create(big, NULL, PK_E_TOO_LARGE, "PK_DEFAULT_MAX_DIGITS + 1 digits");
    free(big);
}

void test_create_rejects_bad_options(void)
{
    pkt_say("checks: malformed from/bound, from > bound, bad size field and bad simd give PK_E_OPTIONS/PK_E_ARG "
            "with *out == NULL; valid ranges are accepted");
    static const struct { const char *from, *bound; int want; } cases[] = {
        {"10", "5", PK_E_OPTIONS},    {"abc", NULL, PK_E_OPTIONS},  {NULL, "abc", PK_E_OPTIONS},
        {"-3", NULL, PK_E_OPTIONS},   {NULL, "-3", PK_E_OPTIONS},   {"", NULL, PK_E_OPTIONS},
        {NULL, "", PK_E_OPTIONS},     {"007", NULL, PK_E_OPTIONS},  {NULL, "0100", PK_E_OPTIONS},
        {" 5", NULL, PK_E_OPTIONS},   {NULL, "5 ", PK_E_OPTIONS},   {"1000001", "1000000", PK_E_OPTIONS},
        {"2", "2", PK_OK},            {"5", "5", PK_OK},            {"2", "1000", PK_OK},
        {NULL, "99999999999999999999999999", PK_OK}, /* above 2^64-1: treated as 2^64-1 */
    };
    pk_options o;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        pk_options_init(&o);
        o.from = cases[i].from;
        o.bound = cases[i].bound;
        char label[120];
        snprintf(label, sizeof label, "from=%s bound=%s", cases[i].from ? cases[i].from : "NULL",
                 cases[i].bound ? cases[i].bound : "NULL");
        expect_create("1000000000000", &o, cases[i].want, label);
    }
    pk_options_init(&o);
    o.size = 0;
    expect_create("12", &o, PK_E_ARG, "options.size = 0");
    pk_options_init(&o);
    o.simd = 99;
    expect_create("12", &o, PK_E_OPTIONS, "options.simd = 99");
    pk_options_init(&o);
    o.simd = -1;
    expect_create("12", &o, PK_E_OPTIONS, "options.simd = -1");

    /* from = 0 or 1 is either refused or harmless: 1 is never listed as a factor. */
    const char *tiny[] = {"0", "1"};
    for (int i = 0; i < 2; i++) {
        pkt_answer a;
        int st = pkt_factor("360", tiny[i], NULL, 0, 0, &a);
        PKT_CHECK(st == PK_OK || st == PK_E_OPTIONS, "from=%s: status %s", tiny[i], pk_status_name(st));
        if (st == PK_OK) {
            mpz_t n;
            mpz_init_set_ui(n, 360);
            pkt_check_answer_facts(n, &a, "from=0/1");
            mpz_clear(n);
        }
        pkt_answer_free(&a);
    }
}

void test_destroy_null_is_a_no_op_and_null_job_is_an_arg_error(void)
{
    pkt_say("checks: pk_job_destroy(NULL) does nothing; every call with a NULL job or NULL output is PK_E_ARG");
    pk_job_destroy(NULL);
    char buf[64];
    size_t len = 0, count = 0;
    uint64_t e = 0;
    pk_progress p;
    p.size = sizeof p;
    pk_result r;
    r.size = sizeof r;
    PKT_CHECK_STATUS(pk_job_step(NULL, 100), PK_E_ARG, "pk_job_step(NULL)");
    PKT_CHECK_STATUS(pk_job_progress(NULL, &p), PK_E_ARG, "pk_job_progress(NULL)");
    PKT_CHECK_STATUS(pk_job_result(NULL, &r), PK_E_ARG, "pk_job_result(NULL)");
    PKT_CHECK_STATUS(pk_job_factor(NULL, 0, buf, sizeof buf, &len, &e), PK_E_ARG, "pk_job_factor(NULL)");
    PKT_CHECK_STATUS(pk_job_cofactor(NULL, buf, sizeof buf, &len), PK_E_ARG, "pk_job_cofactor(NULL)");
    PKT_CHECK_STATUS(pk_job_candidate(NULL, buf, sizeof buf, &len), PK_E_ARG, "pk_job_candidate(NULL)");
    PKT_CHECK_STATUS(pk_job_divisors(NULL, 100, buf, sizeof buf, &len, &count), PK_E_ARG, "pk_job_divisors(NULL)");
    PKT_CHECK_STATUS(pk_job_checkpoint(NULL, buf, sizeof buf, &len), PK_E_ARG, "pk_job_checkpoint(NULL)");
    pk_job *out = SENTINEL;
    PKT_CHECK_STATUS(pk_job_restore(NULL, 10, NULL, &out), PK_E_ARG, "pk_job_restore(NULL text)");
    PKT_CHECK(out == NULL, "pk_job_restore(NULL text) left *out set");
    PKT_CHECK_STATUS(pk_job_restore("x", 1, NULL, NULL), PK_E_ARG, "pk_job_restore(out = NULL)");
    out = SENTINEL;
    PKT_CHECK_STATUS(pk_job_merge(NULL, 1, &out), PK_E_ARG, "pk_job_merge(NULL)");
    PKT_CHECK(out == NULL, "pk_job_merge(NULL) left *out set");

    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create("1000", NULL, &job), PK_OK, "create 1000");
    if (!job) return;
    PKT_CHECK_STATUS(pk_job_progress(job, NULL), PK_E_ARG, "pk_job_progress(out = NULL)");
    PKT_CHECK_STATUS(pk_job_result(job, NULL), PK_E_ARG, "pk_job_result(out = NULL)");
    p.size = 0;
    PKT_CHECK_STATUS(pk_job_progress(job, &p), PK_E_ARG, "pk_job_progress(size = 0)");
    r.size = 0;
    PKT_CHECK_STATUS(pk_job_result(job, &r), PK_E_ARG, "pk_job_result(size = 0)");
    pk_job *pieces[1] = {job};
    out = SENTINEL;
    PKT_CHECK_STATUS(pk_job_merge(pieces, 0, &out), PK_E_ARG, "pk_job_merge(count = 0)");
    PKT_CHECK(out == NULL, "pk_job_merge(count = 0) left *out set");
    PKT_CHECK_STATUS(pk_job_merge(pieces, 1, NULL), PK_E_ARG, "pk_job_merge(out = NULL)");
    pk_job_destroy(job);
}

void test_options_init_reads_primekit_simd_from_environment(void)
{
    pkt_say("checks: pk_options_init defaults, and PRIMEKIT_SIMD=portable/avx2/avx512/auto selects the simd field");
    pk_options o;
    unsetenv("PRIMEKIT_SIMD");
    memset(&o, 0x5a, sizeof o);
    pk_options_init(&o);
    PKT_CHECK(o.size == sizeof o, "size %zu", o.size);
    PKT_CHECK(o.from == NULL && o.bound == NULL, "default range is not NULL/NULL");
    PKT_CHECK(o.max_digits == PK_DEFAULT_MAX_DIGITS, "max_digits %zu", o.max_digits);
    PKT_CHECK(o.bpsw_digits == PK_DEFAULT_BPSW_DIGITS, "bpsw_digits %zu", o.bpsw_digits);
    PKT_CHECK(o.simd == PK_SIMD_AUTO, "simd %d without PRIMEKIT_SIMD", o.simd);
    static const struct { const char *env; int want; } cases[] = {
        {"portable", PK_SIMD_PORTABLE}, {"avx2", PK_SIMD_AVX2}, {"avx512", PK_SIMD_AVX512}, {"auto", PK_SIMD_AUTO}};
    for (size_t i = 0; i < 4; i++) {
        setenv("PRIMEKIT_SIMD", cases[i].env, 1);
        pk_options_init(&o);
        PKT_CHECK(o.simd == cases[i].want, "PRIMEKIT_SIMD=%s gave simd %d, want %d", cases[i].env, o.simd,
                  cases[i].want);
    }
    unsetenv("PRIMEKIT_SIMD");
}

/* One string getter in the caller-buffer convention. */
typedef int (*getter)(const pk_job *job, void *ctx, char *buf, size_t cap, size_t *len);

static int get_factor0(const pk_job *j, void *c, char *b, size_t cap, size_t *len)
{ (void)c; return pk_job_factor(j, 0, b, cap, len, NULL); }
static int get_cofactor(const pk_job *j, void *c, char *b, size_t cap, size_t *len)
{ (void)c; return pk_job_cofactor(j, b, cap, len); }
static int get_candidate(const pk_job *j, void *c, char *b, size_t cap, size_t *len)
{ (void)c; return pk_job_candidate(j, b, cap, len); }
static int get_checkpoint(const pk_job *j, void *c, char *b, size_t cap, size_t *len)
{ (void)c; return pk_job_checkpoint(j, b, cap, len); }
static int get_divisors(const pk_job *j, void *c, char *b, size_t cap, size_t *len)
{ size_t count; (void)c; return pk_job_divisors(j, 1000, b, cap, len, &count); }

static void check_buffer_convention(const pk_job *job, getter g, const char *what, const char *want)
{
    size_t len = 12345;
    PKT_CHECK_STATUS(g(job, NULL, NULL, 0, &len), PK_E_BUFFER, what);
    if (len == 12345 || len > 100000) {
        PKT_CHECK(0, "%s: (NULL, 0, &len) did not report a length", what);
        return;
    }
    if (want) PKT_CHECK(len == strlen(want), "%s: length %zu, want %zu", what, len, strlen(want));
    char *buf = malloc(len + 2);
    /* cap == len: no room for the NUL, nothing written. */
    memset(buf, '#', len + 2);
    size_t len2 = 0;
    PKT_CHECK_STATUS(g(job, NULL, buf, len, &len2), PK_E_BUFFER, what);
    PKT_CHECK(len2 == len, "%s: cap == len reported %zu, want %zu", what, len2, len);
    int untouched = 1;
    for (size_t i = 0; i < len + 2; i++) untouched &= buf[i] == '#';
    PKT_CHECK(untouched, "%s: PK_E_BUFFER wrote into the buffer", what);
    /* Exact size: string + NUL. */
    len2 = 0;
    PKT_CHECK_STATUS(g(job, NULL, buf, len + 1, &len2), PK_OK, what);
    PKT_CHECK(len2 == len && buf[len] == 0 && strlen(buf) == len, "%s: exact-size call wrong (len %zu)", what,
              len2);
    if (want) PKT_CHECK(strcmp(buf, want) == 0, "%s: \"%s\", want \"%s\"", what, buf, want);
    /* len may be NULL. */
    PKT_CHECK_STATUS(g(job, NULL, buf, len + 1, NULL), PK_OK, what);
    PKT_CHECK_STATUS(g(job, NULL, buf, len, NULL), PK_E_BUFFER, what);
    free(buf);
}

void test_caller_buffer_convention_reports_length_and_needs_room_for_nul(void)
{
    pkt_say("checks: (NULL,0,&len) reports the length, cap == len is PK_E_BUFFER and writes nothing, "
            "cap == len+1 succeeds, for factor, cofactor, candidate, divisors, checkpoint");
    pk_options o;
    pk_options_init(&o);
    o.bound = "100";
    pk_job *job = NULL;
    /* 2^3 * 3 * 1000003 * 1000033: cofactor 1000003*1000033 stays (composite) with bound 100. */
    PKT_CHECK_STATUS(pk_job_create("24000864002376", &o, &job), PK_OK, "create");
    if (!job) return;
    check_buffer_convention(job, get_candidate, "pk_job_candidate (fresh job)", "24000864002376");
    check_buffer_convention(job, get_checkpoint, "pk_job_checkpoint (fresh job)", NULL);
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "run");
    check_buffer_convention(job, get_factor0, "pk_job_factor(0)", "2");
    check_buffer_convention(job, get_cofactor, "pk_job_cofactor", "1000036000099");
    check_buffer_convention(job, get_checkpoint, "pk_job_checkpoint (done)", NULL);
    pk_job_destroy(job);

    PKT_CHECK_STATUS(pk_job_create("12354962", NULL, &job), PK_OK, "create 12354962");
    if (!job) return;
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "run");
    check_buffer_convention(job, get_divisors, "pk_job_divisors", "1 2 6177481 12354962");
    uint64_t e = 0;
    char buf[32];
    size_t len = 0;
    PKT_CHECK_STATUS(pk_job_factor(job, 2, buf, sizeof buf, &len, &e), PK_E_INDEX, "pk_job_factor(index 2 of 2)");
    PKT_CHECK_STATUS(pk_job_factor(job, (size_t)-1, buf, sizeof buf, &len, &e), PK_E_INDEX,
                     "pk_job_factor(SIZE_MAX)");
    PKT_CHECK_STATUS(pk_job_factor(job, 1, buf, sizeof buf, &len, NULL), PK_OK, "pk_job_factor(exponent NULL)");
    pk_job_destroy(job);
}

void test_results_need_a_finished_job(void)
{
    pkt_say("checks: result and divisors are PK_E_NOT_DONE before PK_DONE; factors/cofactor work on a running "
            "job; divisors of an incomplete factorization are PK_E_INCOMPLETE");
    pk_options o;
    pk_options_init(&o);
    o.bound = "1000000";
    pk_job *job = NULL;
    /* 3 * 1099511627791: bound 10^6, a 40-bit prime left above it. */
    PKT_CHECK_STATUS(pk_job_create("3298534883373", &o, &job), PK_OK, "create");
    if (!job) return;
    pk_result r;
    r.size = sizeof r;
    char buf[256];
    size_t len = 0, count = 0;
    PKT_CHECK_STATUS(pk_job_result(job, &r), PK_E_NOT_DONE, "result before any step");
    PKT_CHECK_STATUS(pk_job_divisors(job, 100, buf, sizeof buf, &len, &count), PK_E_NOT_DONE,
                     "divisors before any step");
    PKT_CHECK_STATUS(pk_job_cofactor(job, buf, sizeof buf, &len), PK_OK, "cofactor of a fresh job");
    PKT_CHECK(strcmp(buf, "3298534883373") == 0, "fresh cofactor %s", buf);
    int st = pk_job_step(job, 10);
    PKT_CHECK(st == PK_MORE || st == PK_DONE, "step(10): %s", pk_status_name(st));
    if (st == PK_MORE) {
        PKT_CHECK_STATUS(pk_job_result(job, &r), PK_E_NOT_DONE, "result of a running job");
        PKT_CHECK_STATUS(pk_job_divisors(job, 100, buf, sizeof buf, &len, &count), PK_E_NOT_DONE,
                         "divisors of a running job");
    }
    pk_job_destroy(job);

    /* Incomplete: composite cofactor above the bound. */
    o.bound = "10";
    PKT_CHECK_STATUS(pk_job_create("1000036000099", &o, &job), PK_OK, "create composite");
    if (!job) return;
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, "run");
    PKT_CHECK_STATUS(pk_job_divisors(job, 100, buf, sizeof buf, &len, &count), PK_E_INCOMPLETE,
                     "divisors with a composite cofactor");
    pk_job_destroy(job);
}

static void check_divisors(const char *cand, const char *want, size_t want_count)
{
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(cand, NULL, &job), PK_OK, cand);
    if (!job) return;
    PKT_CHECK_STATUS(pkt_run(job, UINT64_MAX, 4), PK_DONE, cand);
    size_t len = 0, count = 0;
    char buf[256];
    int st = pk_job_divisors(job, 1000, buf, sizeof buf, &len, &count);
    PKT_CHECK_STATUS(st, PK_OK, cand);
    if (st == PK_OK) PKT_CHECK(strcmp(buf, want) == 0, "divisors of %s: \"%s\", want \"%s\"", cand, buf, want);
    PKT_CHECK(count == want_count, "divisor count of %s: %zu, want %zu", cand, count, want_count);
    pk_result r;
    r.size = sizeof r;
    PKT_CHECK_STATUS(pk_job_result(job, &r), PK_OK, cand);
    PKT_CHECK(r.is_prime == (want_count == 2 ? PK_PRIME_YES : PK_PRIME_NO), "is_prime of %s: %d", cand, r.is_prime);
    PKT_CHECK(r.complete == 1 && r.certainty == PK_CERTAINTY_PROVEN, "%s: complete %d certainty %d", cand,
              r.complete, r.certainty);
    pk_job_destroy(job);
}

void test_plugin_examples_give_their_divisor_lists(void)
{
    pkt_say("checks: the original plugin's examples: 4, 12, 49, 12354962; 1301081 and 179402471 are prime");
    check_divisors("4", "1 2 4", 3);
    check_divisors("12", "1 2 3 4 6 12", 6);
    check_divisors("49", "1 7 49", 3);
    check_divisors("12354962", "1 2 6177481 12354962", 4);
    check_divisors("1301081", "1 1301081", 2);
    check_divisors("179402471", "1 179402471", 2);
}

/* Divisors of n by brute force, as the expected string. */
static size_t brute_divisors(uint64_t n, char *out, size_t cap)
{
    size_t off = 0, count = 0;
    uint64_t small[4096];
    size_t ns = 0;
    uint64_t d;
    for (d = 1; d * d <= n; d++)
        if (n % d == 0) small[ns++] = d;
    for (size_t i = 0; i < ns; i++) {
        off += (size_t)snprintf(out + off, cap - off, "%s%llu", count ? " " : "", (unsigned long long)small[i]);
        count++;
    }
    for (size_t i = ns; i-- > 0;) {
        uint64_t q = n / small[i];
        if (q == small[i]) continue;
        off += (size_t)snprintf(out + off, cap - off, " %llu", (unsigned long long)q);
        count++;
    }
    return count;
}

void test_divisors_match_brute_force_and_respect_max_count(void)
{
    uint64_t limit = PKT_SIZE(20000, 20000);
    pkt_say("checks: pk_job_divisors of every n in [2, %llu] equals brute force; max_count = count - 1 gives "
            "PK_E_TOO_MANY with the count; probable-prime cofactors count as primes",
            (unsigned long long)limit);
    char want[8192], got[8192];
    for (uint64_t n = 2; n <= limit; n++) {
        char cand[24];
        pkt_u64(n, cand);
        pk_job *job = NULL;
        if (pk_job_create(cand, NULL, &job) != PK_OK) {
            PKT_CHECK(0, "create %s", cand);
            continue;
        }
        if (pkt_run(job, UINT64_MAX, 4) != PK_DONE) {
            pk_job_destroy(job);
            continue;
        }
        size_t wc = brute_divisors(n, want, sizeof want), count = 0, len = 0;
        int st = pk_job_divisors(job, wc, got, sizeof got, &len, &count);
        PKT_CHECK(st == PK_OK && strcmp(got, want) == 0 && count == wc, "divisors of %s: %s \"%s\"", cand,
                  pk_status_name(st), st == PK_OK ? got : "");
        if (wc > 1) {
            count = 0;
            st = pk_job_divisors(job, wc - 1, got, sizeof got, &len, &count);
            PKT_CHECK(st == PK_E_TOO_MANY && count == wc, "max_count %zu for %s: %s, count %zu", wc - 1, cand,
                      pk_status_name(st), count);
        }
        pk_job_destroy(job);
        PKT_BAIL_IF_MANY();
    }

    /* 6 * P with P a 100-bit prime found above the bound: 8 divisors, from GMP. */
    pkt_rng rng;
    pkt_rng_for(&rng, "divisors-probable");
    mpz_t P, d;
    mpz_init(P);
    mpz_init(d);
    pkt_rand_prime(&rng, P, 100);
    mpz_mul_ui(d, P, 6);
    char *cand = mpz_get_str(NULL, 10, d);
    pk_options o;
    pk_options_init(&o);
    o.bound = "1000";
    pk_job *job = NULL;
    PKT_CHECK_STATUS(pk_job_create(cand, &o, &job), PK_OK, "create 6P");
    if (job && pkt_run(job, UINT64_MAX, 4) == PK_DONE) {
        static const unsigned mult[] = {1, 2, 3, 6};
        size_t off = 0;
        for (int i = 0; i < 4; i++) off += (size_t)snprintf(want + off, sizeof want - off, "%s%u", i ? " " : "", mult[i]);
        for (int i = 0; i < 4; i++) {
            mpz_mul_ui(d, P, mult[i]);
            char *s = mpz_get_str(NULL, 10, d);
            off += (size_t)snprintf(want + off, sizeof want - off, " %s", s);
            free(s);
        }
        size_t len = 0, count = 0;
        int st = pk_job_divisors(job, 8, got, sizeof got, &len, &count);
        PKT_CHECK(st == PK_OK && strcmp(got, want) == 0 && count == 8, "divisors of 6P: %s \"%s\" want \"%s\"",
                  pk_status_name(st), st == PK_OK ? got : "", want);
        pk_result r;
        r.size = sizeof r;
        pk_job_result(job, &r);
        PKT_CHECK(r.cofactor_status == PK_COFACTOR_PROBABLE_PRIME && r.complete == 1 &&
                      r.certainty == PK_CERTAINTY_PROBABLE,
                  "6P: status %d complete %d certainty %d", r.cofactor_status, r.complete, r.certainty);
    }
    pk_job_destroy(job);
    free(cand);

    /* Primorials: 2^k divisors. 2^63 still fits a size_t count, 2^64 and 2^65 do not (SIZE_MAX). */
    static const unsigned nprimes[] = {10, 63, 64, 65};
    for (int t = 0; t < 4; t++) {
        mpz_set_ui(d, 1);
        mpz_set_ui(P, 1);
        for (unsigned k = 0; k < nprimes[t]; k++) {
            mpz_nextprime(P, P);
            mpz_mul(d, d, P);
        }
        cand = mpz_get_str(NULL, 10, d);
        job = NULL;
        PKT_CHECK_STATUS(pk_job_create(cand, NULL, &job), PK_OK, "create primorial");
        if (job && pkt_run(job, UINT64_MAX, 4) == PK_DONE) {
            size_t len = 0, count = 0;
            size_t want_count = nprimes[t] < 64 ? (size_t)1 << nprimes[t] : SIZE_MAX;
            int st = pk_job_divisors(job, 1000, NULL, 0, &len, &count);
            PKT_CHECK(st == PK_E_TOO_MANY && count == want_count,
                      "product of the first %u primes: %s, count %zu, want %zu", nprimes[t], pk_status_name(st),
                      count, want_count);
            if (nprimes[t] == 10) {
                /* Within max_count but no buffer: PK_E_BUFFER, still with the count and length. */
                count = 0;
                st = pk_job_divisors(job, 1024, NULL, 0, &len, &count);
                PKT_CHECK(st == PK_E_BUFFER && count == 1024 && len > 1024,
                          "first 10 primes, max_count 1024, no buffer: %s count %zu len %zu", pk_status_name(st),
                          count, len);
            }
        }
        pk_job_destroy(job);
        free(cand);
    }
    mpz_clear(P);
    mpz_clear(d);
}

/* errno must survive every call; the first call that changed it is recorded. */
static const char *g_errno_culprit;
static int g_errno_seen;
#define NO_ERRNO(call)                                            \
    do {                                                          \
        errno = 7777;                                             \
        (void)(call);                                             \
        if (errno != 7777 && !g_errno_culprit) {                  \
            g_errno_culprit = #call;                              \
            g_errno_seen = errno;                                 \
        }                                                         \
    } while (0)

void test_kernel_never_prints_or_touches_errno(void)
{
    pkt_say("checks: a mixed workload (good and bad input, every public function) writes nothing to stdout or "
            "stderr and leaves errno as it was");
    fflush(stdout);
    fflush(stderr);
    int pipefd[2];
    if (pipe(pipefd) != 0) {
        PKT_CHECK(0, "pipe failed");
        return;
    }
    int saved_out = dup(1), saved_err = dup(2);
    dup2(pipefd[1], 1);
    dup2(pipefd[1], 2);

    pk_options o;
    NO_ERRNO(pk_options_init(&o));
    o.bound = "100000";
    pk_job *job = NULL, *bad = NULL, *back = NULL, *merged = NULL;
    char buf[4096];
    size_t len = 0, count = 0;
    uint64_t e;
    pk_progress p;
    p.size = sizeof p;
    pk_result r;
    r.size = sizeof r;
    NO_ERRNO(pk_version_number());
    NO_ERRNO(pk_version_string());
    NO_ERRNO(pk_status_name(-3));
    NO_ERRNO(pk_status_message(99));
    NO_ERRNO(pk_simd_active(PK_SIMD_AUTO));
    NO_ERRNO(pk_job_create("12a", NULL, &bad));
    o.max_digits = 40;
    NO_ERRNO(pk_job_create("99999999999999999999999999999999999999999999", &o, &bad)); /* too large */
    o.max_digits = PK_DEFAULT_MAX_DIGITS;
    NO_ERRNO(pk_job_create("1", NULL, &bad));
    NO_ERRNO(pk_job_create("340282366920938463463374607431768211457", &o, &job));
    NO_ERRNO(pk_job_step(job, 1000));
    NO_ERRNO(pk_job_interrupt(job));
    NO_ERRNO(pk_job_step(job, UINT64_MAX));
    NO_ERRNO(pk_job_checkpoint(job, buf, sizeof buf, &len));
    NO_ERRNO(pk_job_restore(buf, len, NULL, &back));
    NO_ERRNO(pk_job_restore("garbage", 7, NULL, &bad));
    NO_ERRNO(pk_job_step(job, UINT64_MAX));
    NO_ERRNO(pk_job_progress(job, &p));
    NO_ERRNO(pk_job_result(job, &r));
    NO_ERRNO(pk_job_factor(job, 0, buf, sizeof buf, &len, &e));
    NO_ERRNO(pk_job_factor(job, 99, buf, sizeof buf, &len, &e));
    NO_ERRNO(pk_job_cofactor(job, NULL, 0, &len));
    NO_ERRNO(pk_job_candidate(job, buf, sizeof buf, &len));
    NO_ERRNO(pk_job_divisors(job, 100, buf, sizeof buf, &len, &count));
    pk_job *pieces[1] = {job};
    NO_ERRNO(pk_job_merge(pieces, 1, &merged));
    pk_cache *cache = NULL;
    NO_ERRNO(pk_cache_create(0, &cache));
    NO_ERRNO(pk_cache_destroy(cache));
    NO_ERRNO(pk_job_destroy(merged));
    NO_ERRNO(pk_job_destroy(back));
    NO_ERRNO(pk_job_destroy(job));
    NO_ERRNO(pk_job_destroy(NULL));

    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    close(pipefd[1]);
    char got[256];
    ssize_t n = read(pipefd[0], got, sizeof got - 1);
    close(pipefd[0]);
    PKT_CHECK(n <= 0, "the library wrote %zd bytes: \"%.*s\"", n, (int)(n > 0 ? n : 0), got);
    PKT_CHECK(g_errno_culprit == NULL, "%s changed errno to %d", g_errno_culprit ? g_errno_culprit : "", g_errno_seen);
}
