/*
 * tune.c — pk-tune: measures rows of the word-size ECM schedule
 * (pk_word_ecm_levels, CKernel/factor/word_arith.c) and the length of the
 * word-size pass before the quadratic sieve (pk_qs_word_pass), against a
 * kernel built with PK_WORD_TUNE (the table and the pass writable; never the
 * library's build). `make tune ARGS="..."` builds both and runs it.
 *
 *   pk-tune [--rounds R] [--scale K] [--only 76,79,100,112,128,pass,all] [--set ROW=B1,B2,D[,MAXBITS]]...
 *
 * Each experiment changes one thing (a row's B1/B2/D, or the pass) and times
 * pk_factor_u128_array over fixed sets of numbers made with GMP's Mersenne
 * Twister (fixed seeds, so a rerun factors the same numbers). In every round
 * each setting runs once over each set, in an order rotated round by round;
 * the report gives per setting the median CPU time per number
 * (CLOCK_PROCESS_CPUTIME_ID) over the rounds, its spread, and the median of
 * the same-round ratios to the first setting (the library's); then, free of
 * noise, the word-size splitter (pk_wsplit) run on each number as the batch
 * call runs it: "units" is its mean work per number (about one modular
 * multiplication each; to the end below PK_QS_MIN_BITS bits, where that is
 * the whole split of a semiprime), and for numbers that go to the sieve
 * "pass" counts those the pass of pk_qs_word_pass(bits) units splits alone. Every answer is checked: the factors multiply back to n and pass
 * GMP's primality test. --scale K makes every set K times as large (the
 * same numbers first); --rounds 0 gives the units alone. --set applies
 * before the experiments (e.g. to try the pass with another row).
 */
#define _POSIX_C_SOURCE 200809L
#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "primekit.h"
#include "factor/qs.h"
#include "factor/word_impl.h"

#ifndef PK_WORD_TUNE
#error "tune.c needs the PK_WORD_TUNE build (make tune)"
#endif

#define MAX_SETTINGS 8
#define MAX_SETS 4
#define MAX_ROUNDS 31

typedef struct {
    int row; /* -1: the pass; -2: the schedule before (`previous`), table and pass; -3: the library's */
    uint32_t b1, b2, d;
    int shift;
    unsigned floor;
} setting;

/* The schedule before these measurements (2026-11-27): its table, and the pass 2^(bits/8+1) without a floor. */
static const pk_word_ecm_level previous[PK_WORD_ECM_LEVELS] = {
    {40, 30, 900, 30},          {48, 50, 2000, 30},         {56, 70, 3500, 210},
    {64, 200, 10000, 210},      {76, 400, 20000, 210},      {88, 800, 40000, 210},
    {100, 2000, 100000, 210},   {112, 3000, 150000, 210},   {128, 1400, 75000, 210},
    {128, 2500, 130000, 210},   {128, 5000, 260000, 210},   {128, 11000, 550000, 210},
    {128, 25000, 1200000, 210}, {128, 50000, 2500000, 210},
};
static pk_word_ecm_level library[PK_WORD_ECM_LEVELS];
static int library_shift;
static unsigned library_floor;

typedef struct {
    const char *what;
    int lo, hi;       /* bits of n */
    int k;            /* 2 or 3 balanced factors; 0: one factor of flo..fhi bits and a prime cofactor */
    int flo, fhi;
    int count;
    unsigned long seed;
} set_spec;

typedef struct {
    const char *name, *what;
    setting s[MAX_SETTINGS];
    int ns;
    set_spec sets[MAX_SETS];
    int nsets;
} experiment;

static void die(const char *msg)
{
    fprintf(stderr, "pk-tune: FATAL: %s\n", msg);
    exit(2);
}

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A random prime of exactly `bits` bits. */
static void prime_of(mpz_t p, gmp_randstate_t r, int bits)
{
    do {
        mpz_urandomb(p, r, (mp_bitcnt_t)(bits - 1));
        mpz_setbit(p, (mp_bitcnt_t)(bits - 1));
        mpz_nextprime(p, p);
    } while ((int)mpz_sizeinbase(p, 2) != bits);
}

static pk_uint128 *make_set(const set_spec *ss)
{
    if (ss->lo < 65 || ss->hi > 128 || ss->lo > ss->hi)
        die("a set's numbers must have 65 to 128 bits (the two-word splitter)");
    pk_uint128 *v = malloc((size_t)ss->count * sizeof *v);
    if (!v)
        die("out of memory");
    gmp_randstate_t r;
    gmp_randinit_mt(r);
    gmp_randseed_ui(r, ss->seed);
    mpz_t n, p;
    mpz_inits(n, p, NULL);
    for (int i = 0; i < ss->count; i++) {
        const int bits = ss->lo + i % (ss->hi - ss->lo + 1);
        do {
            mpz_set_ui(n, 1);
            if (ss->k) {
                for (int j = 0, left = bits; j < ss->k; j++) {
                    int b = left / (ss->k - j);
                    prime_of(p, r, b);
                    mpz_mul(n, n, p);
                    left -= b;
                }
            } else {
                int fb = ss->flo + (i / (ss->hi - ss->lo + 1)) % (ss->fhi - ss->flo + 1);
                prime_of(p, r, fb);
                mpz_mul(n, n, p);
                prime_of(p, r, bits - fb);
                mpz_mul(n, n, p);
            }
        } while ((int)mpz_sizeinbase(n, 2) != bits);
        uint64_t w[2] = {0, 0};
        mpz_export(w, NULL, -1, sizeof(uint64_t), 0, 0, n);
        v[i].lo = w[0];
        v[i].hi = w[1];
    }
    mpz_clears(n, p, NULL);
    gmp_randclear(r);
    return v;
}

static void check(const pk_uint128 *v, const pk_u128_answer *a, int count)
{
    mpz_t n, m, p;
    mpz_inits(n, m, p, NULL);
    for (int i = 0; i < count; i++) {
        mpz_set_ui(n, v[i].hi);
        mpz_mul_2exp(n, n, 64);
        mpz_add_ui(n, n, v[i].lo);
        mpz_set_ui(m, 1);
        for (uint32_t j = 0; j < a[i].factor_count; j++) {
            mpz_set_ui(p, a[i].primes[j].hi);
            mpz_mul_2exp(p, p, 64);
            mpz_add_ui(p, p, a[i].primes[j].lo);
            if (!mpz_probab_prime_p(p, 30))
                die("a listed factor is not prime");
            for (unsigned e = 0; e < a[i].exponents[j]; e++)
                mpz_mul(m, m, p);
        }
        if (mpz_cmp(m, n) != 0)
            die("the factors do not multiply back to n");
    }
    mpz_clears(n, m, p, NULL);
}

static void apply(const setting *s)
{
    memcpy(pk_word_ecm_levels, library, sizeof library);
    pk_qs_word_pass_shift = library_shift;
    pk_qs_word_pass_floor = library_floor;
    if (s->row == -2) {
        memcpy(pk_word_ecm_levels, previous, sizeof previous);
        pk_qs_word_pass_floor = 0;
    } else if (s->row == -3) {
        return;
    } else if (s->row >= 0) {
        pk_word_ecm_levels[s->row].b1 = s->b1;
        pk_word_ecm_levels[s->row].b2 = s->b2;
        pk_word_ecm_levels[s->row].d = s->d;
    } else {
        pk_qs_word_pass_shift = s->shift;
        pk_qs_word_pass_floor = s->floor;
    }
}

static void label(const setting *s, char *buf, size_t len)
{
    if (s->row == -2)
        snprintf(buf, len, "the schedule before");
    else if (s->row == -3)
        snprintf(buf, len, "the library's schedule");
    else if (s->row >= 0)
        snprintf(buf, len, "row %u: B1 %u, B2 %u, D %u", pk_word_ecm_levels[s->row].max_bits, s->b1, s->b2, s->d);
    else
        snprintf(buf, len, "pass 2^(bits/8+1%+d), at least 2^%u", s->shift, s->floor);
}

/* The splitter on each number of the set, as the batch call runs it on a part of 65 bits or more: to the
   end below PK_QS_MIN_BITS bits (*units gets the mean units of work per number), else for the pass (the
   return value counts the numbers it splits; -1 when the set has numbers of both kinds). */
static int splitter(const pk_uint128 *v, int count, double *units)
{
    int found = 0, to_end = 0;
    uint64_t work = 0;
    for (int i = 0; i < count; i++) {
        pk_u128 n = ((pk_u128)v[i].hi << 64) | v[i].lo, f = 0;
        unsigned bits = 128u - (unsigned)__builtin_clzll(v[i].hi);
        pk_wsplit s;
        pk_wsplit_init(&s, n);
        if (bits < PK_QS_MIN_BITS) {
            while (!pk_wsplit_run(&s, UINT64_MAX, &f)) {
            }
            to_end++;
        } else {
            const uint64_t pass = pk_qs_word_pass(bits);
            int got = 0;
            while (!got && pk_wsplit_work(&s) < pass)
                got = pk_wsplit_run(&s, pass - pk_wsplit_work(&s), &f);
            found += got;
        }
        work += pk_wsplit_work(&s);
    }
    *units = (double)work / count;
    return to_end == 0 ? found : to_end == count ? -2 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *x, int n)
{
    double t[MAX_ROUNDS];
    memcpy(t, x, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

static void run(const experiment *x, int rounds, int scale)
{
    printf("\n== %s: %s\n", x->name, x->what);
    fflush(stdout);
    pk_uint128 *v[MAX_SETS];
    pk_u128_answer *a[MAX_SETS];
    set_spec sets[MAX_SETS];
    for (int j = 0; j < x->nsets; j++) {
        sets[j] = x->sets[j];
        sets[j].count *= scale;
        v[j] = make_set(&sets[j]);
        a[j] = malloc((size_t)sets[j].count * sizeof *a[j]);
        if (!a[j])
            die("out of memory");
    }
    static double t[MAX_SETTINGS][MAX_SETS][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        for (int k = 0; k < x->ns; k++) {
            const int i = (k + r) % x->ns;
            apply(&x->s[i]);
            for (int j = 0; j < x->nsets; j++) {
                const int c = sets[j].count;
                double c0 = cpu_now();
                if (pk_factor_u128_array(v[j], (size_t)c, a[j], sizeof(pk_u128_answer)) != PK_OK)
                    die("pk_factor_u128_array failed");
                t[i][j][r] = (cpu_now() - c0) / c;
                check(v[j], a[j], c);
            }
        }
        fprintf(stderr, "pk-tune: %s round %d of %d\n", x->name, r + 1, rounds);
    }
    for (int j = 0; j < x->nsets; j++) {
        const set_spec *ss = &sets[j];
        printf("-- %d numbers: %s\n", ss->count, ss->what);
        printf("   %-38s %12s %21s %7s %15s %9s %5s\n", "setting", "median/number", "min-max", "ratio", "ratio min-max",
               "units", "pass");
        for (int i = 0; i < x->ns; i++) {
            double ratio[MAX_ROUNDS], lo = rounds ? 1e30 : 0, hi = 0, rlo = rounds ? 1e30 : 0, rhi = 0;
            for (int r = 0; r < rounds; r++) {
                ratio[r] = t[i][j][r] / t[0][j][r];
                lo = t[i][j][r] < lo ? t[i][j][r] : lo;
                hi = t[i][j][r] > hi ? t[i][j][r] : hi;
                rlo = ratio[r] < rlo ? ratio[r] : rlo;
                rhi = ratio[r] > rhi ? ratio[r] : rhi;
            }
            apply(&x->s[i]);
            char name[96];
            label(&x->s[i], name, sizeof name);
            double units;
            int found = splitter(v[j], ss->count, &units);
            char fs[16] = "-";
            if (found >= 0)
                snprintf(fs, sizeof fs, "%d", found);
            printf("   %-38s %9.1f us %9.1f-%9.1f us %7.3f %7.3f-%7.3f %9.0f %5s\n", name,
                   rounds ? 1e6 * median(t[i][j], rounds) : 0, 1e6 * lo, 1e6 * hi, rounds ? median(ratio, rounds) : 0,
                   rlo, rhi, units, fs);
        }
    }
    fflush(stdout);
    apply(&(setting){-1, 0, 0, 0, library_shift, library_floor});
    for (int j = 0; j < x->nsets; j++) {
        free(v[j]);
        free(a[j]);
    }
}

/* A row's setting: B2 = m·B1, D = 210. */
#define ROW(r, b1, m) {r, b1, (b1) * (m), 210, 0, 0}
#define PASS(shift, floor) {-1, 0, 0, 0, shift, floor}

#define OLD {-2, 0, 0, 0, 0, 0}
#define LIBRARY {-3, 0, 0, 0, 0, 0}
#define PASS_ROWS(r, b1, b2)                                                                                   \
    {ROW(r, 200, 30), {r, b1, b2, 210, 0, 0}, ROW(r, 100, 50), ROW(r, 150, 50), ROW(r, 150, 30), ROW(r, 150, 20),   \
     ROW(r, 300, 30), ROW(r, 120, 50)}, 8

/* The first setting of each is the library's. */
static experiment experiments[] = {
    {"76", "parts of 65-76 bits run ECM at this row to the end (64 curves, then the next row)",
     {ROW(4, 400, 30), ROW(4, 400, 50), ROW(4, 300, 30), ROW(4, 500, 30), ROW(4, 250, 50), ROW(4, 300, 50),
      ROW(4, 500, 50), ROW(4, 400, 40)}, 8,
     {{"balanced semiprimes of 66-76 bits", 66, 76, 2, 0, 0, 220, 76},
      {"three balanced prime factors, 70-76 bits", 70, 76, 3, 0, 0, 140, 763}}, 2},
    {"79", "parts of 77-79 bits run ECM at this row to the end (before: the row to 88 bits)",
     {ROW(5, 600, 30), ROW(5, 800, 50), ROW(5, 500, 50), ROW(5, 600, 50), ROW(5, 700, 40), ROW(5, 800, 30),
      ROW(5, 1000, 30), ROW(5, 1000, 50)}, 8,
     {{"balanced semiprimes of 77-79 bits", 77, 79, 2, 0, 0, 120, 88},
      {"three balanced prime factors, 77-79 bits", 77, 79, 3, 0, 0, 60, 883}}, 2},
    {"100", "parts of 80-100 bits: the row of the short pass before the sieve",
     PASS_ROWS(6, 2000, 100000),
     {{"80-100 bits, one prime factor of 20-32 bits", 80, 100, 0, 20, 32, 63, 100}}, 1},
    {"112", "parts of 101-112 bits: the row of the short pass before the sieve",
     PASS_ROWS(7, 3000, 150000),
     {{"101-112 bits, one prime factor of 20-40 bits", 101, 112, 0, 20, 40, 84, 112}}, 1},
    {"128", "parts of 113-128 bits: the row of the short pass before the sieve",
     PASS_ROWS(8, 1400, 75000),
     {{"113-128 bits, one prime factor of 20-40 bits", 113, 128, 0, 20, 40, 64, 128}}, 1},
    {"pass", "the length of the short pass, 2^(bits/8+1+shift) units and at least 2^floor",
     {PASS(0, 14), PASS(0, 0), PASS(0, 13), PASS(0, 15), PASS(1, 14), PASS(1, 0)}, 6,
     {{"80-95 bits, one prime factor of 20-32 bits", 80, 95, 0, 20, 32, 64, 1000},
      {"balanced semiprimes of 80-95 bits", 80, 95, 2, 0, 0, 32, 1001},
      {"96-112 bits, one prime factor of 20-32 bits", 96, 112, 0, 20, 32, 51, 1002},
      {"balanced semiprimes of 96-112 bits", 96, 112, 2, 0, 0, 17, 1003}}, 4},
    {"all", "the whole schedule (table and pass) against the one before",
     {LIBRARY, OLD}, 2,
     {{"66-79 bits, balanced semiprimes", 66, 79, 2, 0, 0, 140, 2000},
      {"66-79 bits, three balanced prime factors", 66, 79, 3, 0, 0, 98, 2001},
      {"80-128 bits, one prime factor of 20-32 bits", 80, 128, 0, 20, 32, 98, 2002},
      {"balanced semiprimes of 80-112 bits", 80, 112, 2, 0, 0, 33, 2003}}, 4},
};

int main(int argc, char **argv)
{
    int rounds = 7, scale = 1;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
            if (rounds < 0 || rounds > MAX_ROUNDS)
                die("--rounds takes 0 (units only) to 31");
        } else if (!strcmp(argv[i], "--scale") && i + 1 < argc) {
            scale = atoi(argv[++i]);
            if (scale < 1 || scale > 100)
                die("--scale takes 1 to 100");
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(argv[i], "--set") && i + 1 < argc) {
            unsigned row, b1, b2, d, max_bits = 0;
            int got = sscanf(argv[++i], "%u=%u,%u,%u,%u", &row, &b1, &b2, &d, &max_bits);
            if (got < 4 || row >= PK_WORD_ECM_LEVELS || (d != 30 && d != 210) || b1 < 2 || b2 <= b1 || b1 >= 65536 ||
                (got == 5 && (max_bits < 40 || max_bits > 128)))
                die("--set takes ROW=B1,B2,D[,MAXBITS] (D 30 or 210, B1 below 65536, MAXBITS 40 to 128)");
            pk_word_ecm_levels[row] = (pk_word_ecm_level){got == 5 ? max_bits : pk_word_ecm_levels[row].max_bits,
                                                          b1, b2, d};
        } else {
            fprintf(stderr, "usage: pk-tune [--rounds R] [--scale K] [--only 76,79,100,112,128,pass,all] [--set ROW=B1,B2,D[,MAXBITS]]...\n");
            return 1;
        }
    }
    memcpy(library, pk_word_ecm_levels, sizeof library);
    library_shift = pk_qs_word_pass_shift;
    library_floor = pk_qs_word_pass_floor;
    printf("pk-tune: %d rounds; CPU time per number, medians over rounds; ratio = same-round time / first setting's\n",
           rounds);
    for (size_t e = 0; e < sizeof experiments / sizeof *experiments; e++) {
        if (only) {
            const char *p = strstr(only, experiments[e].name);
            size_t len = strlen(experiments[e].name);
            if (!p || (p != only && p[-1] != ',') || (p[len] && p[len] != ','))
                continue;
        }
        run(&experiments[e], rounds, scale);
    }
    return 0;
}
