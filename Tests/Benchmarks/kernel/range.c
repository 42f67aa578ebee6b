/*
 * range.c — pk-range-bench: range factoring (pk_range_*) against the
 * coreutils factor program on the same numbers, in the same run.
 *
 *   ./build/pk-range-bench [--runs N] [--only 1e12|2e7|1e18] [--limit L] [--check] [--latency]
 *
 * Per row and run (alternating: kernel, then `seq A B | factor > /dev/null`):
 * the kernel steps through the range and formats every segment into one
 * reused buffer (nothing printed), timed as wall time and as the CPU time of
 * the thread; coreutils as the wall time of `seq A B | factor > /dev/null`
 * (and the CPU time of both), then as the CPU time of `factor < file` alone
 * (the numbers written to a temporary file once). Prints medians, the ratio
 * of the wall medians and of the CPU medians (factor alone / kernel), and
 * numbers per second per core (kernel CPU). On a loaded machine the CPU
 * ratio is the steadier one. --check compares every answer
 * with pk_factor_u64_array once. --limit overrides the sieve limit (private
 * pk_range_create_limit; for tuning). --latency instead measures, for each
 * row's range, the wall time from pk_range_interrupt (called by a second
 * thread at random moments) to the return of the step that saw it, and the
 * CPU time the stepping thread spent in between (steadier under load).
 */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/resource.h>

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

static double children_cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_CHILDREN, &u);
    return (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           (double)u.ru_stime.tv_usec * 1e-6;
}

/* Wall time of the shell command; its processes' CPU time in *c. */
static double shell_run(const char *cmd, double *c)
{
    double w0 = wall(), c0 = children_cpu();
    if (system(cmd) != 0) {
        fprintf(stderr, "failed: %s\n", cmd);
        exit(1);
    }
    *c = children_cpu() - c0;
    return wall() - w0;
}

typedef struct poker {
    pk_range *range;
    atomic_int stop, armed;   /* armed: an interrupt is out and not yet seen */
    _Atomic double sent;      /* when it was sent (wall) */
    _Atomic double sent_cpu;  /* the stepping thread's CPU time then */
    clockid_t stepper;        /* the stepping thread's CPU clock */
} poker;

static void *poke(void *arg)
{
    poker *k = arg;
    uint64_t x = 88172645463325252ull;
    while (!atomic_load(&k->stop)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        double until = wall() + (double)(x % 2000) * 1e-6; /* 0-2 ms apart */
        while (wall() < until && !atomic_load(&k->stop)) {
        }
        if (atomic_load(&k->armed))
            continue;
        struct timespec t;
        clock_gettime(k->stepper, &t);
        atomic_store(&k->sent_cpu, (double)t.tv_sec + (double)t.tv_nsec * 1e-9);
        atomic_store(&k->sent, wall());
        atomic_store(&k->armed, 1);
        pk_range_interrupt(k->range);
    }
    return NULL;
}

static void latency(uint64_t a, uint64_t b)
{
    static double lat[1 << 16], latc[1 << 16];
    size_t n = 0;
    poker k;
    pthread_getcpuclockid(pthread_self(), &k.stepper);
    atomic_init(&k.sent_cpu, 0.0);
    pk_range_create(a, b, &k.range);
    atomic_init(&k.stop, 0);
    atomic_init(&k.armed, 0);
    atomic_init(&k.sent, 0.0);
    pthread_t th;
    pthread_create(&th, NULL, poke, &k);
    int rc;
    do {
        rc = pk_range_step(k.range, UINT64_MAX);
        if (rc == PK_INTERRUPTED && atomic_load(&k.armed)) {
            if (n < sizeof lat / sizeof *lat) {
                latc[n] = cpu() - atomic_load(&k.sent_cpu);
                lat[n++] = wall() - atomic_load(&k.sent);
            }
            atomic_store(&k.armed, 0);
        }
    } while (rc != PK_DONE && rc >= 0);
    atomic_store(&k.stop, 1);
    pthread_join(th, NULL);
    pk_range_destroy(k.range);
    if (!n) {
        printf("  no interrupt was seen\n");
        return;
    }
    qsort(lat, n, sizeof *lat, cmp);
    qsort(latc, n, sizeof *latc, cmp);
    printf("  interrupt to step return, %zu interrupts: wall median %.0f us, p99 %.0f us, max %.0f us; CPU of the"
           " stepping thread median %.0f us, p99 %.0f us, max %.0f us\n", n, lat[n / 2] * 1e6, lat[n * 99 / 100] * 1e6,
           lat[n - 1] * 1e6, latc[n / 2] * 1e6, latc[n * 99 / 100] * 1e6, latc[n - 1] * 1e6);
}

int main(int argc, char **argv)
{
    int runs = 5, check = 0, lat = 0;
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
        else if (!strcmp(argv[i], "--latency"))
            lat = 1;
        else {
            fprintf(stderr, "usage: pk-range-bench [--runs N] [--only 1e12|2e7|1e18] [--limit L] [--check] [--latency]\n");
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
        if (lat) {
            printf("[%llu, %llu]\n", (unsigned long long)rows[k].a, (unsigned long long)rows[k].b);
            for (int r = 0; r < runs; r++)
                latency(rows[k].a, rows[k].b);
            continue;
        }
        double kw[99], kc[99], kf[99], cw[99], cc[99], fc[99];
        size_t bytes = 0;
        char pipeline[160], alone[160], input[] = "/tmp/pk-range-bench-XXXXXX";
        int fd = mkstemp(input);
        if (fd < 0)
            return 1;
        close(fd);
        snprintf(pipeline, sizeof pipeline, "seq %llu %llu | factor > /dev/null", (unsigned long long)rows[k].a,
                 (unsigned long long)rows[k].b);
        snprintf(alone, sizeof alone, "seq %llu %llu > %s", (unsigned long long)rows[k].a,
                 (unsigned long long)rows[k].b, input);
        double ignored;
        shell_run(alone, &ignored);
        snprintf(alone, sizeof alone, "factor < %s > /dev/null", input);
        for (int r = 0; r < runs; r++) {
            bytes = kernel_run(rows[k].a, rows[k].b, limit, check && r == 0, &kw[r], &kc[r], &kf[r]);
            cw[r] = shell_run(pipeline, &cc[r]);
            shell_run(alone, &fc[r]);
        }
        remove(input);
        double n = (double)(rows[k].b - rows[k].a + 1);
        double mkw = median(kw, runs), mkc = median(kc, runs), mkf = median(kf, runs), mcw = median(cw, runs);
        double mcc = median(cc, runs), mfc = median(fc, runs);
        printf("[%llu, %llu] (%zu bytes of lines)\n", (unsigned long long)rows[k].a, (unsigned long long)rows[k].b,
               bytes);
        printf("  kernel: wall %.4f s, CPU %.4f s (formatting %.4f s), %.3g numbers/s per core (CPU)\n", mkw, mkc,
               mkf, n / mkc);
        printf("  coreutils: seq | factor wall %.4f s (CPU of both %.4f s); factor alone on a file, CPU %.4f s\n",
               mcw, mcc, mfc);
        printf("  ratios: wall %.1fx, CPU (factor alone / kernel) %.1fx; the tool's floor: %.0fx\n", mcw / mkw,
               mfc / mkc, rows[k].floor);
    }
    return 0;
}
