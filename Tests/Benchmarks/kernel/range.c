/*
 * range.c — pk-range-bench: range factoring (pk_range_*) against the
 * coreutils factor program on the same numbers, in the same run.
 *
 *   ./build/pk-range-bench [--runs N] [--only 1e12|2e7|1e18] [--limit L] [--check]
 *
 * Per row and run (alternating: kernel, then `seq A B | factor > /dev/null`):
 * the kernel steps through the range and formats every segment into one
 * reused buffer (nothing printed), timed as wall time and as the CPU time of
 * the thread; coreutils is timed as wall time of the shell pipeline. Prints
 * medians and the ratio of the medians (coreutils wall / kernel wall), and
 * numbers per second per core (kernel CPU). --check compares every answer
 * with pk_factor_u64_array once. --limit overrides the sieve limit (private
 * pk_range_create_limit; for tuning).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "primekit.h"
#include "range/range.h"

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One kernel run: returns the bytes formatted; wall and CPU seconds in *w, *c. */
static size_t kernel_run(uint64_t a, uint64_t b, uint64_t limit, int check, double *w, double *c, double *fmt)
{
    static char buf[1 << 21];
    pk_range *r;
    double w0 = wall(), c0 = cpu();
    int rc = limit ? pk_range_create_limit(a, b, limit, &r) : pk_range_create(a, b, &r);
    if (rc != PK_OK) {
        fprintf(stderr, "create: %s\n", pk_status_name(rc));
        exit(1);
    }
    size_t bytes = 0, bad = 0;
    *fmt = 0;
    do {
        rc = pk_range_step(r, UINT64_MAX);
        if (rc < 0) {
            fprintf(stderr, "step: %s\n", pk_status_name(rc));
            exit(1);
        }
        uint64_t first;
        size_t count, index = 0;
        pk_range_segment(r, &first, &count);
        double f0 = cpu();
        while (index < count) {
            size_t len, lines;
            if (pk_range_format(r, index, buf, sizeof buf, &len, &lines) < 0)
                exit(1);
            bytes += len;
            index += lines;
        }
        *fmt += cpu() - f0;
        if (check && count) {
            pk_u64_answer *x = malloc(count * sizeof *x), *y = malloc(count * sizeof *y);
            uint64_t *n = malloc(count * sizeof *n);
            for (size_t i = 0; i < count; i++)
                n[i] = first + i;
            pk_range_answers(r, 0, count, x, sizeof *x);
            pk_factor_u64_array(n, count, y, sizeof *y);
            for (size_t i = 0; i < count; i++)
                if (x[i].factor_count != y[i].factor_count ||
                    memcmp(x[i].primes, y[i].primes, x[i].factor_count * sizeof(uint64_t)) ||
                    memcmp(x[i].exponents, y[i].exponents, x[i].factor_count))
                    bad++;
            free(x);
            free(y);
            free(n);
        }
    } while (rc != PK_DONE);
    pk_range_destroy(r);
    *w = wall() - w0;
    *c = cpu() - c0;
    if (check)
        printf("  check against pk_factor_u64_array: %zu answers differ\n", bad);
    return bytes;
}

static double coreutils_run(uint64_t a, uint64_t b)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "seq %llu %llu | factor > /dev/null", (unsigned long long)a, (unsigned long long)b);
    double w0 = wall();
    if (system(cmd) != 0) {
        fprintf(stderr, "coreutils factor failed\n");
        exit(1);
    }
    return wall() - w0;
}

int main(int argc, char **argv)
{
    int runs = 5, check = 0;
    const char *only = NULL;
    uint64_t limit = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--limit") && i + 1 < argc)
            limit = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--check"))
            check = 1;
        else {
            fprintf(stderr, "usage: pk-range-bench [--runs N] [--only 1e12|2e7|1e18] [--limit L] [--check]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > 99)
        runs = 5;
    struct row {
        const char *name;
        uint64_t a, b;
        double floor;
    } rows[] = {
        {"1e12", UINT64_C(1000000000000), UINT64_C(1000000100000), 20},
        {"2e7", 2, 10000000, 5},
        {"1e18", UINT64_C(1000000000000000000), UINT64_C(1000000000000100000), 5},
    };
    printf("range factoring vs coreutils factor, %d alternating runs each, medians (wall; kernel CPU)\n", runs);
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        if (only && strcmp(only, rows[k].name))
            continue;
        double kw[99], kc[99], kf[99], cw[99];
        size_t bytes = 0;
        for (int r = 0; r < runs; r++) {
            bytes = kernel_run(rows[k].a, rows[k].b, limit, check && r == 0, &kw[r], &kc[r], &kf[r]);
            cw[r] = coreutils_run(rows[k].a, rows[k].b);
        }
        double n = (double)(rows[k].b - rows[k].a + 1);
        double mkw = median(kw, runs), mkc = median(kc, runs), mkf = median(kf, runs), mcw = median(cw, runs);
        printf("[%llu, %llu] (%zu bytes of lines)\n", (unsigned long long)rows[k].a, (unsigned long long)rows[k].b,
               bytes);
        printf("  kernel: wall %.4f s, CPU %.4f s (formatting %.4f s), %.3g numbers/s per core\n", mkw, mkc, mkf,
               n / mkc);
        printf("  coreutils factor: wall %.4f s\n", mcw);
        printf("  ratio coreutils wall / kernel wall: %.1fx (the tool's floor: %.0fx)\n", mcw / mkw, rows[k].floor);
    }
    return 0;
}
