/*
 * test_range.c — range factoring (pk_range_*): every answer against the
 * batch call pk_factor_u64_array (an independent code path: trial division,
 * rho and ECM per number) and a product check, the formatter against a
 * printf rendering of those answers, interrupts and checkpoints against an
 * uninterrupted run, every single-character change of a checkpoint, and
 * bad arguments.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growing text. */
typedef struct text {
    char *s;
    size_t len, cap;
} text;

static void text_add(text *t, const char *s, size_t n)
{
    if (n == 0) return;
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + n + 1) cap *= 2;
        t->s = realloc(t->s, cap);
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
}

/* The coreutils factor line for an answer, by printf. */
static void oracle_line(const pk_u64_answer *a, text *out)
{
    char w[32];
    int n = snprintf(w, sizeof w, "%llu:", (unsigned long long)a->n);
    text_add(out, w, (size_t)n);
    for (uint32_t k = 0; k < a->factor_count; k++)
        for (unsigned e = 0; e < a->exponents[k]; e++) {
            n = snprintf(w, sizeof w, " %llu", (unsigned long long)a->primes[k]);
            text_add(out, w, (size_t)n);
        }
    text_add(out, "\n", 1);
}

static int same_answer(const pk_u64_answer *a, const pk_u64_answer *b)
{
    if (a->n != b->n || a->factor_count != b->factor_count) return 0;
    for (uint32_t k = 0; k < a->factor_count; k++)
        if (a->primes[k] != b->primes[k] || a->exponents[k] != b->exponents[k]) return 0;
    return 1;
}

/* primes ascending, product n (checked in 128 bits) */
static int multiplies_back(const pk_u64_answer *a)
{
    unsigned __int128 prod = 1;
    for (uint32_t k = 0; k < a->factor_count; k++) {
        if (k && a->primes[k] <= a->primes[k - 1]) return 0;
        for (unsigned e = 0; e < a->exponents[k]; e++) {
            prod *= a->primes[k];
            if (prod > a->n) return 0;
        }
    }
    return prod == a->n;
}

/* Append the delivered segment's lines, formatted through buffers of random sizes. */
static void format_segment(pk_range *r, pkt_rng *rng, text *out)
{
    size_t count;
    pk_range_segment(r, NULL, &count);
    size_t index = 0;
    char *buf = malloc(1 << 16);
    while (index < count) {
        size_t cap = pkt_rand_below(rng, 4) == 0 ? (size_t)pkt_rand_range(rng, 1, 400) : (size_t)1 << 16;
        size_t len = 99, lines = 99;
        int rc = pk_range_format(r, index, buf, cap, &len, &lines);
        if (rc == PK_E_BUFFER) {
            PKT_CHECK(len == 0 && lines == 0 && cap < PK_RANGE_LINE_MAX, "PK_E_BUFFER with cap %zu", cap);
            continue;
        }
        PKT_CHECK(rc == PK_OK || rc == PK_MORE, "format: %s", pk_status_name(rc));
        PKT_CHECK(len <= cap && lines > 0, "format wrote %zu bytes, %zu lines into %zu", len, lines, cap);
        PKT_CHECK((rc == PK_OK) == (index + lines == count), "PK_OK exactly at the segment's end");
        if (rc != PK_OK && rc != PK_MORE) break;
        text_add(out, buf, len);
        index += lines;
    }
    free(buf);
}

/* Check the delivered segment against the batch call; append the oracle's lines. */
static void check_segment(pk_range *r, uint64_t *expect_next, text *oracle, const char *what)
{
    uint64_t first;
    size_t count;
    PKT_CHECK_STATUS(pk_range_segment(r, &first, &count), PK_OK, "segment");
    if (!count) return;
    PKT_CHECK(first == *expect_next, "%s: segment starts at %llu, want %llu", what, (unsigned long long)first,
              (unsigned long long)*expect_next);
    pk_u64_answer *got = malloc(count * sizeof *got), *want = malloc(count * sizeof *want);
    uint64_t *nums = malloc(count * sizeof *nums);
    for (size_t i = 0; i < count; i++) nums[i] = first + i;
    PKT_CHECK_STATUS(pk_range_answers(r, 0, count, got, sizeof *got), PK_OK, "answers");
    PKT_CHECK_STATUS(pk_factor_u64_array(nums, count, want, sizeof *want), PK_OK, "batch");
    for (size_t i = 0; i < count; i++) {
        PKT_CHECK(same_answer(&got[i], &want[i]) && multiplies_back(&got[i]),
                  "%s: answers differ for %llu (%u vs %u factors)", what, (unsigned long long)nums[i],
                  got[i].factor_count, want[i].factor_count);
        oracle_line(&want[i], oracle);
        PKT_BAIL_IF_MANY();
    }
    *expect_next = first + count;
    free(got);
    free(want);
    free(nums);
}

/* Run [a, b] to the end with random budgets; compare everything; return the formatted text. */
static void run_range(uint64_t a, uint64_t b, pkt_rng *rng, const char *what, text *out)
{
    pk_range *r;
    PKT_CHECK_STATUS(pk_range_create(a, b, &r), PK_OK, what);
    if (!r) return;
    text oracle = {0};
    size_t start = out->len;
    uint64_t next = a;
    int rc;
    size_t steps = 0;
    int failed_before = pkt_failures();
    do {
        uint64_t budget = pkt_rand_below(rng, 3) == 0 ? pkt_rand_range(rng, 1, 100000) : UINT64_MAX;
        rc = pk_range_step(r, budget);
        PKT_CHECK(rc == PK_MORE || rc == PK_DONE, "%s: step %s", what, pk_status_name(rc));
        check_segment(r, &next, &oracle, what);
        format_segment(r, rng, out);
        if (pkt_failures() > failed_before) break;
    } while (rc == PK_MORE && ++steps < 100000000);
    PKT_CHECK(next - 1 == b, "%s: stopped at %llu", what, (unsigned long long)(next - 1));
    PKT_CHECK(out->len - start == oracle.len && (oracle.len == 0 || memcmp(out->s + start, oracle.s, oracle.len) == 0),
              "%s: formatted lines differ from the oracle's (%zu vs %zu bytes)", what, out->len - start, oracle.len);
    size_t count = 9;
    PKT_CHECK_STATUS(pk_range_step(r, UINT64_MAX), PK_DONE, "step after the end");
    pk_range_segment(r, NULL, &count);
    PKT_CHECK(count == 0, "a step after the end delivers nothing");
    free(oracle.s);
    pk_range_destroy(r);
}

void test_range_every_n_below_a_million_matches_the_batch_call_and_its_lines(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "range-million");
    text out = {0};
    uint64_t top = PKT_SIZE(1000000, 200000);
    run_range(2, top, &rng, "[2, top]", &out);
    /* a few lines by hand */
    PKT_CHECK(out.len > 40 && memcmp(out.s, "2: 2\n3: 3\n4: 2 2\n5: 5\n6: 2 3\n7: 7\n8: 2 2 2\n", 40) == 0,
              "first lines: %.40s", out.s ? out.s : "");
    free(out.s);
}

void test_range_random_ranges_near_1e12_1e18_and_2_64_match_the_batch_call(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "range-random");
    const uint64_t centres[] = {UINT64_C(1000000000000), UINT64_C(1000000000000000000),
                                UINT64_MAX - UINT64_C(200000), UINT64_C(1) << 32, UINT64_C(4294967291) * 4294967291u};
    for (size_t c = 0; c < sizeof centres / sizeof *centres; c++) {
        for (int k = 0; k < PKT_SIZE(4, 2); k++) {
            /* short ranges stop the sieve low and prove leftovers; long ones sieve further */
            uint64_t len = k == 0 ? pkt_rand_range(&rng, 1, 40) : pkt_rand_range(&rng, 1, PKT_SIZE(70000, 8000));
            uint64_t a = centres[c] + pkt_rand_below(&rng, 100000);
            uint64_t b = a + len - 1;
            char what[80];
            snprintf(what, sizeof what, "[%llu, %llu]", (unsigned long long)a, (unsigned long long)b);
            text out = {0};
            run_range(a, b, &rng, what, &out);
            free(out.s);
            PKT_BAIL_IF_MANY();
        }
    }
    /* the very top: last = 2^64 - 1 */
    text out = {0};
    run_range(UINT64_MAX - 5000, UINT64_MAX, &rng, "[2^64-5001, 2^64-1]", &out);
    const char *top = "18446744073709551615: 3 5 17 257 641 65537 6700417\n";
    PKT_CHECK(out.len > strlen(top) && memcmp(out.s + out.len - strlen(top), top, strlen(top)) == 0,
              "last line of the top range");
    free(out.s);
    out = (text){0};
    run_range(2, 2, &rng, "[2, 2]", &out);
    PKT_CHECK(out.len == 5 && memcmp(out.s, "2: 2\n", 5) == 0, "[2, 2] prints one line");
    free(out.s);
}

/* Lines of [a, b] with interrupts before random steps (a step polls before each set-up chunk and segment),
   the first and a few later ones followed by a checkpoint and a restore into a new handle (the segment
   delivered before is written out first). A restore sets the sieve up again, so not every interrupt does. */
static void interrupted_lines(uint64_t a, uint64_t b, pkt_rng *rng, text *out, size_t *restores)
{
    pk_range *r;
    PKT_CHECK_STATUS(pk_range_create(a, b, &r), PK_OK, "create");
    int rc;
    *restores = 0;
    int failed_before = pkt_failures();
    int steps = 0;
    do {
        if (steps++ == 0 || pkt_rand_below(rng, 8) == 0) pk_range_interrupt(r);
        rc = pk_range_step(r, pkt_rand_range(rng, 1, pkt_rand_below(rng, 2) ? 50000 : 1u << 22));
        PKT_CHECK(rc == PK_MORE || rc == PK_DONE || rc == PK_INTERRUPTED, "step: %s", pk_status_name(rc));
        size_t count;
        pk_range_segment(r, NULL, &count);
        if (rc == PK_INTERRUPTED) PKT_CHECK(count == 0, "an interrupted step delivers nothing");
        format_segment(r, rng, out);
        if (rc == PK_INTERRUPTED && (*restores == 0 || (*restores < 6 && pkt_rand_below(rng, 2) == 0))) {
            size_t len;
            char *cp = NULL;
            PKT_CHECK_STATUS(pk_range_checkpoint(r, NULL, 0, &len), PK_E_BUFFER, "checkpoint size");
            cp = malloc(len + 1);
            PKT_CHECK_STATUS(pk_range_checkpoint(r, cp, len + 1, &len), PK_OK, "checkpoint");
            pk_range_destroy(r);
            r = NULL;
            PKT_CHECK_STATUS(pk_range_restore(cp, len, &r), PK_OK, "restore");
            free(cp);
            (*restores)++;
            if (!r) return;
        }
    } while (rc != PK_DONE && pkt_failures() == failed_before);
    pk_range_destroy(r);
}

/* A handle moved with pk_range_seek, before its first step or after some, gives from there on the lines a
   handle over the rest of the range gives; a position past the end is refused and changes nothing. */
void test_range_seek_goes_on_from_any_position(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "range-seek");
    const uint64_t starts[] = {2, UINT64_C(1000000000000), UINT64_MAX - 200000};
    for (size_t s = 0; s < 3; s++)
        for (int k = 0; k < PKT_SIZE(4, 2); k++) {
            uint64_t a = starts[s] + pkt_rand_below(&rng, 1000);
            uint64_t b = a + pkt_rand_range(&rng, 1, s == 2 ? 20000 : 100000);
            uint64_t count = b - a + 1;
            uint64_t done = k == 0 ? count : pkt_rand_below(&rng, count);
            pk_range *r;
            PKT_CHECK_STATUS(pk_range_create(a, b, &r), PK_OK, "create");
            if (!r) return;
            /* some steps first (or none), their segments dropped */
            for (uint64_t steps = pkt_rand_below(&rng, 3); steps > 0; steps--)
                if (pk_range_step(r, UINT64_MAX) != PK_MORE) break;
            PKT_CHECK_STATUS(pk_range_seek(r, count + 1), PK_E_OPTIONS, "a position past the end");
            PKT_CHECK_STATUS(pk_range_seek(r, done), PK_OK, "seek");
            pk_range_progress p = {.size = sizeof p};
            pk_range_progress_of(r, &p);
            PKT_CHECK(p.done == done, "seek to %llu leaves done %llu", (unsigned long long)done,
                      (unsigned long long)p.done);
            text moved = {0}, rest = {0};
            int rc;
            do {
                rc = pk_range_step(r, UINT64_MAX);
                PKT_CHECK(rc == PK_MORE || rc == PK_DONE, "step: %s", pk_status_name(rc));
                format_segment(r, &rng, &moved);
            } while (rc == PK_MORE);
            pk_range_destroy(r);
            if (done < count) run_range(a + done, b, &rng, "the rest", &rest);
            PKT_CHECK(moved.len == rest.len && (rest.len == 0 || memcmp(moved.s, rest.s, rest.len) == 0),
                      "[%llu, %llu] from %llu: %zu bytes, a handle over the rest %zu", (unsigned long long)a,
                      (unsigned long long)b, (unsigned long long)done, moved.len, rest.len);
            free(moved.s);
            free(rest.s);
        }
    PKT_CHECK_STATUS(pk_range_seek(NULL, 0), PK_E_ARG, "seek NULL");
}

void test_range_interrupted_at_random_polls_restores_to_the_same_lines(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "range-interrupt");
    const uint64_t starts[] = {2, UINT64_C(1000000000000), UINT64_C(1000000000000000000), UINT64_MAX - 300000};
    for (size_t s = 0; s < 4; s++)
        for (int k = 0; k < PKT_SIZE(3, 1); k++) {
            uint64_t a = starts[s] + pkt_rand_below(&rng, 1000);
            /* near 10^18 and 2^64 the batch call that checks every answer takes ~30 us a number */
            uint64_t most = starts[s] > (UINT64_C(1) << 40) ? PKT_SIZE(30000, 10000) : PKT_SIZE(150000, 40000);
            uint64_t b = a + pkt_rand_range(&rng, 1, most);
            text whole = {0}, cut = {0};
            run_range(a, b, &rng, "uninterrupted", &whole);
            size_t restores;
            interrupted_lines(a, b, &rng, &cut, &restores);
            PKT_CHECK(restores > 0, "the run was interrupted at least once");
            PKT_CHECK(whole.len == cut.len && memcmp(whole.s, cut.s, whole.len) == 0,
                      "[%llu, %llu]: %zu restores give %zu bytes, uninterrupted %zu", (unsigned long long)a,
                      (unsigned long long)b, restores, cut.len, whole.len);
            free(whole.s);
            free(cut.s);
        }
}

static int restored_state(const char *t, size_t n, pk_range_progress *p)
{
    pk_range *r;
    int rc = pk_range_restore(t, n, &r);
    if (rc == PK_OK) {
        p->size = sizeof *p;
        pk_range_progress_of(r, p);
        pk_range_destroy(r);
    } else if (r != NULL) {
        return -100;
    }
    return rc;
}

void test_range_checkpoint_single_character_changes_are_refused_or_harmless(void)
{
    pk_range *r;
    PKT_CHECK_STATUS(pk_range_create(UINT64_C(123456789012), UINT64_C(123456989012), &r), PK_OK, "create");
    PKT_CHECK_STATUS(pk_range_step(r, UINT64_MAX), PK_MORE, "one segment");
    char cp[256];
    size_t len;
    PKT_CHECK_STATUS(pk_range_checkpoint(r, cp, sizeof cp, &len), PK_OK, "checkpoint");
    pk_range_progress want = {.size = sizeof want};
    pk_range_progress_of(r, &want);
    pk_range_destroy(r);
    pk_range_progress got;
    PKT_CHECK_STATUS(restored_state(cp, len, &got), PK_OK, "the checkpoint itself");
    PKT_CHECK(got.done == want.done && got.first == want.first && got.last == want.last, "round trip");
    size_t accepted = 0, refused = 0;
    char t[260];
    for (size_t i = 0; i < len; i++) {
        for (int c = 0; c < 256; c++) {
            if (c == (unsigned char)cp[i]) continue;
            memcpy(t, cp, len);
            t[i] = (char)c;
            int rc = restored_state(t, len, &got);
            if (rc == PK_OK) {
                accepted++;
                PKT_CHECK(got.done == want.done && got.first == want.first && got.last == want.last,
                          "change at %zu to %d restores another state", i, c);
            } else {
                refused++;
                PKT_CHECK(rc == PK_E_CHECKPOINT || rc == PK_E_CHECKPOINT_VERSION || rc == PK_E_CHECKPOINT_STATE,
                          "change at %zu: %s", i, pk_status_name(rc));
            }
        }
        /* deletion and insertion */
        memcpy(t, cp, i);
        memcpy(t + i, cp + i + 1, len - i - 1);
        PKT_CHECK(restored_state(t, len - 1, &got) < 0, "deleting character %zu is refused", i);
        memcpy(t, cp, i);
        t[i] = '7';
        memcpy(t + i + 1, cp + i, len - i);
        PKT_CHECK(restored_state(t, len + 1, &got) < 0, "inserting at %zu is refused", i);
        PKT_BAIL_IF_MANY();
    }
    PKT_CHECK(refused > 0, "changes were refused");
    PKT_CHECK(restored_state(cp, len - 1, &got) < 0 && restored_state("", 0, &got) < 0, "truncation refused");
    (void)accepted;
}

void test_range_bad_arguments_are_refused_and_change_nothing(void)
{
    pk_range *r = (pk_range *)1;
    PKT_CHECK_STATUS(pk_range_create(1, 10, &r), PK_E_RANGE, "first 1");
    PKT_CHECK(r == NULL, "out is NULL on error");
    PKT_CHECK_STATUS(pk_range_create(0, 10, &r), PK_E_RANGE, "first 0");
    PKT_CHECK_STATUS(pk_range_create(11, 10, &r), PK_E_OPTIONS, "reversed");
    PKT_CHECK_STATUS(pk_range_create(UINT64_MAX, UINT64_MAX - 1, &r), PK_E_OPTIONS, "reversed at the top");
    PKT_CHECK_STATUS(pk_range_create(2, 10, NULL), PK_E_ARG, "NULL out");
    PKT_CHECK_STATUS(pk_range_step(NULL, 1), PK_E_ARG, "step NULL");
    PKT_CHECK_STATUS(pk_range_segment(NULL, NULL, NULL), PK_E_ARG, "segment NULL");
    pk_range_destroy(NULL);
    pk_range_interrupt(NULL);

    PKT_CHECK_STATUS(pk_range_create(100, 2000, &r), PK_OK, "create");
    PKT_CHECK_STATUS(pk_range_step(r, 0), PK_MORE, "budget 0");
    pk_range_progress p = {.size = sizeof p};
    PKT_CHECK_STATUS(pk_range_progress_of(r, &p), PK_OK, "progress");
    PKT_CHECK(p.done == 0 && p.total == 1901 && p.first == 100 && p.last == 2000, "budget 0 does nothing");
    pk_range_progress bad = {.size = sizeof bad - 1};
    PKT_CHECK_STATUS(pk_range_progress_of(r, &bad), PK_E_ARG, "progress size");
    PKT_CHECK_STATUS(pk_range_step(r, 1), PK_DONE, "one segment covers it");
    PKT_CHECK_STATUS(pk_range_progress_of(r, &p), PK_OK, "progress");
    PKT_CHECK(p.done == 1901, "done after the step");
    pk_u64_answer a[2];
    PKT_CHECK_STATUS(pk_range_answers(r, 1900, 2, a, sizeof *a), PK_E_INDEX, "answers past the end");
    PKT_CHECK_STATUS(pk_range_answers(r, 0, 1, a, sizeof *a - 1), PK_E_ARG, "answer size");
    PKT_CHECK_STATUS(pk_range_answers(r, 1900, 1, a, sizeof *a), PK_OK, "the last answer");
    PKT_CHECK(a[0].n == 2000 && a[0].factor_count == 2 && a[0].primes[0] == 2 && a[0].exponents[0] == 4 &&
                  a[0].primes[1] == 5 && a[0].exponents[1] == 3, "2000 = 2^4 5^3");
    char buf[64];
    size_t len, lines;
    PKT_CHECK_STATUS(pk_range_format(r, 1902, buf, sizeof buf, &len, &lines), PK_E_INDEX, "format past the end");
    PKT_CHECK_STATUS(pk_range_format(r, 1901, buf, sizeof buf, &len, &lines), PK_OK, "format at the end");
    PKT_CHECK(len == 0 && lines == 0, "nothing to write at the end");
    PKT_CHECK_STATUS(pk_range_format(r, 1900, buf, 10, &len, &lines), PK_E_BUFFER, "a line that does not fit");
    PKT_CHECK_STATUS(pk_range_format(r, 1900, buf, 28, &len, &lines), PK_OK, "a line that fits");
    PKT_CHECK(len == 20 && lines == 1 && memcmp(buf, "2000: 2 2 2 2 5 5 5\n", 20) == 0, "2000's line");
    PKT_CHECK_STATUS(pk_range_format(r, 0, NULL, 5, &len, &lines), PK_E_ARG, "NULL buffer with room");
    char cp[8];
    PKT_CHECK_STATUS(pk_range_checkpoint(r, cp, sizeof cp, &len), PK_E_BUFFER, "small checkpoint buffer");
    PKT_CHECK_STATUS(pk_range_checkpoint(NULL, cp, sizeof cp, &len), PK_E_ARG, "checkpoint NULL");
    pk_range_destroy(r);

    r = (pk_range *)1;
    PKT_CHECK_STATUS(pk_range_restore(NULL, 0, &r), PK_E_ARG, "restore NULL");
    PKT_CHECK(r == NULL, "restore sets out to NULL");
    const char *reversed = "primekit-range 1\nfirst 10\nlast 9\ndone 0\n";
    char t[200];
    snprintf(t, sizeof t, "%s", reversed);
    /* a checkpoint with a correct checksum but a reversed range: a state error */
    snprintf(t + strlen(t), sizeof t - strlen(t), "checksum %016llx\n", (unsigned long long)pkt_fnv1a64(t, strlen(t)));
    PKT_CHECK_STATUS(pk_range_restore(t, strlen(t), &r), PK_E_CHECKPOINT_STATE, "reversed range in a checkpoint");
}

void test_range_split_pieces_concatenate_to_the_whole_range(void)
{
    uint64_t f, l;
    PKT_CHECK_STATUS(pk_range_split(2, 10, 0, 0, &f, &l), PK_E_ARG, "0 parts");
    PKT_CHECK_STATUS(pk_range_split(2, 10, 10, 0, &f, &l), PK_E_OPTIONS, "more parts than numbers");
    PKT_CHECK_STATUS(pk_range_split(2, 10, 3, 3, &f, &l), PK_E_INDEX, "index past the parts");
    PKT_CHECK_STATUS(pk_range_split(1, 10, 3, 0, &f, &l), PK_E_RANGE, "first 1");
    PKT_CHECK_STATUS(pk_range_split(2, UINT64_MAX, 7, 6, &f, &l), PK_OK, "the whole word");
    PKT_CHECK(l == UINT64_MAX, "the last part ends at 2^64-1");
    pkt_rng rng;
    pkt_rng_for(&rng, "range-split");
    uint64_t a = UINT64_C(999999999000), b = a + 100000;
    text whole = {0}, joined = {0};
    run_range(a, b, &rng, "whole", &whole);
    uint64_t parts = 5, expect = a;
    for (uint64_t i = 0; i < parts; i++) {
        PKT_CHECK_STATUS(pk_range_split(a, b, parts, i, &f, &l), PK_OK, "split");
        PKT_CHECK(f == expect && l >= f, "part %llu starts where the last ended", (unsigned long long)i);
        expect = l + 1;
        run_range(f, l, &rng, "part", &joined);
    }
    PKT_CHECK(expect == b + 1, "the parts cover the range");
    PKT_CHECK(whole.len == joined.len && memcmp(whole.s, joined.s, whole.len) == 0, "joined lines are the whole's");
    free(whole.s);
    free(joined.s);
}

/* Another thread interrupts at random moments (inside set-up, sieve or the finishing of cofactors): the
   lines equal the uninterrupted run's, with a checkpoint and a restore after some of the interrupts. */
#include <pthread.h>
#include <stdatomic.h>

typedef struct interrupter {
    pk_range *_Atomic target;
    atomic_int stop;
    uint64_t seed;
} interrupter;

static void *interrupt_loop(void *arg)
{
    interrupter *it = arg;
    uint64_t x = it->seed;
    while (!atomic_load(&it->stop)) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        for (volatile uint64_t spin = (x >> 44) & 0x3ffff; spin > 0; spin--) {
        }
        pk_range *r = atomic_load(&it->target);
        if (r) pk_range_interrupt(r);
    }
    return NULL;
}

void test_range_interrupts_from_another_thread_give_the_same_lines(void)
{
    pkt_rng rng;
    pkt_rng_for(&rng, "range-thread");
    const uint64_t starts[] = {UINT64_C(1000000000000000000), 1000, UINT64_MAX - 100000};
    for (size_t s = 0; s < 3; s++) {
        uint64_t a = starts[s] + pkt_rand_below(&rng, 1000);
        uint64_t b = a + pkt_rand_range(&rng, 1, s == 1 ? PKT_SIZE(200000, 50000) : PKT_SIZE(30000, 10000));
        text whole = {0}, cut = {0};
        run_range(a, b, &rng, "uninterrupted", &whole);
        interrupter it;
        atomic_init(&it.target, NULL);
        atomic_init(&it.stop, 0);
        it.seed = pkt_rand(&rng);
        pk_range *r;
        PKT_CHECK_STATUS(pk_range_create(a, b, &r), PK_OK, "create");
        atomic_store(&it.target, r);
        pthread_t th;
        pthread_create(&th, NULL, interrupt_loop, &it);
        int rc, interrupts = 0, restores = 0;
        do {
            rc = pk_range_step(r, UINT64_MAX);
            PKT_CHECK(rc == PK_MORE || rc == PK_DONE || rc == PK_INTERRUPTED, "step: %s", pk_status_name(rc));
            format_segment(r, &rng, &cut);
            if (rc == PK_INTERRUPTED && ++interrupts % 16 == 0 && restores < 4) {
                char cp[256];
                size_t len;
                PKT_CHECK_STATUS(pk_range_checkpoint(r, cp, sizeof cp, &len), PK_OK, "checkpoint");
                pk_range *fresh = NULL;
                PKT_CHECK_STATUS(pk_range_restore(cp, len, &fresh), PK_OK, "restore");
                if (!fresh) break;
                atomic_store(&it.target, fresh);
                /* the old handle may be in the middle of a pk_range_interrupt call: stop the thread first */
                atomic_store(&it.stop, 1);
                pthread_join(th, NULL);
                pk_range_destroy(r);
                r = fresh;
                atomic_store(&it.stop, 0);
                pthread_create(&th, NULL, interrupt_loop, &it);
                restores++;
            }
        } while (rc != PK_DONE && rc >= 0);
        atomic_store(&it.stop, 1);
        pthread_join(th, NULL);
        pk_range_destroy(r);
        PKT_CHECK(whole.len == cut.len && memcmp(whole.s, cut.s, whole.len) == 0,
                  "[%llu, %llu]: %d interrupts, %d restores: %zu bytes, uninterrupted %zu", (unsigned long long)a,
                  (unsigned long long)b, interrupts, restores, cut.len, whole.len);
        pkt_say("[%llu, %llu]: %d interrupts, %d restores, same lines", (unsigned long long)a,
                (unsigned long long)b, interrupts, restores);
        free(whole.s);
        free(cut.s);
    }
}
