/*
 * gen_corpus — writes the seed corpora of fuzz_restore (real checkpoints) and
 * fuzz_candidate (header bytes + candidate text).
 *
 *   gen_corpus <restore-dir> <candidate-dir>
 *
 * Checkpoints cover the three arithmetic paths, mid-run and finished, every
 * cofactor status, split ranges, and an open GMP window. The output is a pure
 * function of the kernel, so rerunning it reproduces the committed files
 * (unless the checkpoint format changes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "primekit.h"

static void die(const char *what, int rc)
{
    fprintf(stderr, "gen_corpus: %s: %s\n", what, rc ? pk_status_name(rc) : strerror(errno));
    exit(1);
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        die(path, 0);
}

/* Create a job with options o, step it `steps` times with `budget` (0 steps:
   run to the end), and write its checkpoint. */
static void checkpoint_with(const char *dir, const char *name, const char *n, const pk_options *o,
                            uint64_t budget, unsigned steps, int conclude)
{
    pk_job *job;
    int rc = pk_job_create(n, o, &job);
    if (rc != PK_OK)
        die(name, rc);
    if (steps == 0) {
        while ((rc = pk_job_step(job, UINT64_MAX)) == PK_MORE)
            ;
    } else {
        for (unsigned i = 0; i < steps; i++)
            if ((rc = pk_job_step(job, budget)) != PK_MORE)
                break;
    }
    if (rc < 0 || (conclude && (rc = pk_job_conclude(job)) != PK_OK))
        die(name, rc);
    size_t len;
    pk_job_checkpoint(job, NULL, 0, &len);
    char *text = malloc(len + 1);
    if (!text || (rc = pk_job_checkpoint(job, text, len + 1, &len)) != PK_OK)
        die(name, rc);
    write_file(dir, name, text, len);
    free(text);
    pk_job_destroy(job);
}

/* A trial-division job (version-1 checkpoint). */
static void checkpoint(const char *dir, const char *name, const char *n, const char *from,
                       const char *bound, size_t bpsw_digits, uint64_t budget, unsigned steps)
{
    pk_options o;
    pk_options_init(&o);
    o.mode = PK_MODE_TRIAL;
    o.from = from;
    o.bound = bound;
    if (bpsw_digits != (size_t)-1)
        o.bpsw_digits = bpsw_digits;
    checkpoint_with(dir, name, n, &o, budget, steps, 0);
}

/* A complete job (version-2 checkpoint), with an optional ECM effort limit. */
static void complete(const char *dir, const char *name, const char *n, unsigned ecm_digits, uint64_t budget,
                     unsigned steps)
{
    pk_options o;
    pk_options_init(&o);
    o.ecm_digits = ecm_digits;
    checkpoint_with(dir, name, n, &o, budget, steps, 0);
}

/* A complete job asked to conclude (pk_job_conclude) just before its checkpoint. */
static void concluded(const char *dir, const char *name, const char *n, uint64_t budget, unsigned steps)
{
    checkpoint_with(dir, name, n, NULL, budget, steps, 1);
}

/* A fuzz_candidate input: flags, from selector, bound selector, budget byte, text. */
static void candidate(const char *dir, const char *name, uint8_t flags, uint8_t from, uint8_t bound,
                      uint8_t budget, const char *text)
{
    size_t n = strlen(text);
    uint8_t *buf = malloc(n + 4);
    if (!buf)
        die(name, 0);
    buf[0] = flags;
    buf[1] = from;
    buf[2] = bound;
    buf[3] = budget;
    memcpy(buf + 4, text, n);
    write_file(dir, name, buf, n + 4);
    free(buf);
}

/* A d-digit number: 10^(d-1) + 7 (so it is not a perfect power of ten). */
static char *digits(size_t d)
{
    char *s = malloc(d + 1);
    if (!s)
        die("digits", 0);
    memset(s, '0', d);
    s[0] = '1';
    s[d - 1] = '7';
    s[d] = '\0';
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: gen_corpus <restore-dir> <candidate-dir>\n");
        return 2;
    }
    const char *r = argv[1], *c = argv[2];
    const size_t dflt = (size_t)-1;

    /* Complete jobs: trial division, the parts and each split's state. */
    complete(r, "v2-trial-mid", "1000000016000000063", 0, 3000, 1);
    complete(r, "v2-done-f7", "340282366920938463463374607431768211457", 0, 0, 0);
    complete(r, "v2-done-powers", "1246785253285058220716124847288764354899033267733312284885626878112757977883", 0,
             0, 0);
    complete(r, "v2-split-128", "150877741366717398497521917692071611467", 0, 1u << 16, 3);
    complete(r, "v2-ecm-mid", "19089646418076700638093652483960256172813760522736775650563", 0, 1u << 18, 30);
    complete(r, "v2-ecm-parts", "2183716516991169353317911200530702450878659370121202297", 0, 1u << 18, 12);
    complete(r, "v2-partial-done",
             "9641628265553941653251774264401730262267629802896646001526088", 15, 0, 0);
    concluded(r, "v2-concluded-ecm", "19089646418076700638093652483960256172813760522736775650563", 1u << 18, 30);
    concluded(r, "v2-concluded-trial", "19089646418076700638093652483960256172813760522736775650563", 64, 1);

    /* 64-bit path. */
    checkpoint(r, "u64-fresh", "600851475143", NULL, NULL, dflt, 0, 1);
    checkpoint(r, "u64-mid", "1000000016000000063", NULL, NULL, dflt, 30000, 2);
    checkpoint(r, "u64-done", "600851475143", NULL, NULL, dflt, 0, 0);
    checkpoint(r, "u64-prime-mid", "18446744073709551557", NULL, NULL, dflt, 5000, 3);
    checkpoint(r, "u64-prime-done", "1000000007", NULL, NULL, dflt, 0, 0);
    checkpoint(r, "u64-powers-done", "12354962", NULL, NULL, dflt, 0, 0);
    checkpoint(r, "u64-pow2-done", "9223372036854775808", NULL, NULL, dflt, 0, 0);
    checkpoint(r, "u64-range-mid", "600851475143", "1000", "7000", dflt, 200, 2);
    checkpoint(r, "u64-range-done", "600851475143", "1000", "7000", dflt, 0, 0);
    checkpoint(r, "u64-range-high", "18446744073709551557", "4294967000", "4294968000", dflt, 0, 0);
    checkpoint(r, "u64-two", "2", NULL, NULL, dflt, 0, 0);
    /* 128-bit path. */
    checkpoint(r, "u128-mid", "340282366920938463463374607431768211455", NULL, "100000000", dflt, 4000, 3);
    checkpoint(r, "u128-done", "340282366920938463463374607431768211455", NULL, "100000", dflt, 0, 0);
    checkpoint(r, "u128-fermat-done", "18446744073709551617", NULL, NULL, dflt, 0, 0);
    checkpoint(r, "u128-range-fp", "340282366920938463463374607431768211297", "1048000", "1100000", dflt, 2000, 2);
    checkpoint(r, "u128-composite-done", "100000000000000000039000000000000000000319", NULL, "1000", dflt, 0, 0);
    checkpoint(r, "u128-probable-done", "170141183460469231731687303715884105727", NULL, "1000", dflt, 0, 0);
    /* GMP path: word products. */
    checkpoint(r, "gmp-mid", "3713820117856140824697372666000000000000000000000000001", NULL, NULL, dflt, 3000, 3);
    checkpoint(r, "u128-factors-done", "3713820117856140824697372666", NULL, "1000000", dflt, 0, 0);
    checkpoint(r, "gmp-unknown-done", "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000007", NULL, "10000", 10, 0, 0);
    checkpoint(r, "gmp-range-mid", "1000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000007", "5000", "900000", dflt, 10000, 2);
    /* GMP path: an open window (cofactors of ~3,700 digits and more). */
    char *big = digits(3800);
    checkpoint(r, "gmp-window-open", big, NULL, "3000000", dflt, 20000, 3);
    checkpoint(r, "gmp-window-range", big, "300000", "1000000", dflt, 3000, 1);
    free(big);

    /* fuzz_candidate seeds. */
    candidate(c, "small", 0x00, 0, 0, 0x3f, "600851475143");
    candidate(c, "prime64", 0x00, 0, 0, 0x2c, "18446744073709551557");
    candidate(c, "fermat65", 0x00, 0, 0, 0x4f, "18446744073709551617");
    candidate(c, "u128", 0x08, 0, 120, 0x3c, "340282366920938463463374607431768211455");
    candidate(c, "gmp", 0x10, 0, 7, 0x2a, "3713820117856140824697372666000000000000000000000000001");
    candidate(c, "range", 0x05, 40, 90, 0x1f, "600851475143");
    candidate(c, "range-high", 0x0a, 100, 120, 0x1f, "340282366920938463463374607431768211297");
    candidate(c, "range-top", 0x0a, 200, 250, 0x10, "18446744073709551557");
    candidate(c, "edge-options", 0x0f, 3, 14, 0x11, "1000000007");
    candidate(c, "tiny-max", 0x20, 5, 0, 0x11, "123456789");
    candidate(c, "avx512", 0xc0, 0, 0, 0x3f, "999999999989");
    candidate(c, "portable", 0x40, 0, 0, 0x3f, "999999999989");
    candidate(c, "zero", 0x00, 0, 0, 0x00, "0");
    candidate(c, "one", 0x00, 0, 0, 0x00, "1");
    candidate(c, "leading-zero", 0x00, 0, 0, 0x00, "012");
    candidate(c, "sign", 0x00, 0, 0, 0x00, "-15");
    candidate(c, "powers", 0x00, 0, 0, 0x2f, "1152921504606846976");
    return 0;
}
