/* report.c — collecting the figures and printing the table. */
#include "report.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static bench_row rows[24];
static size_t nrows;

bench_split report_split;

bench_lat_row report_latency[LAT_ROWS] = {
    [LAT_U64] = {"64-bit (W1)", {0}, 0, NULL},
    [LAT_U128] = {"128-bit (W128)", {0}, 0, NULL},
    [LAT_GMP5_COLD] = {"GMP 10^5 dig, no cache", {0}, 0, NULL},
    [LAT_GMP5_WARM] = {"GMP 10^5 dig, warm", {0}, 0, NULL},
    [LAT_GMP6_COLD] = {"GMP 10^6 dig, no cache", {0}, 0, NULL},
    [LAT_GMP6_WARM] = {"GMP 10^6 dig, warm", {0}, 0, NULL},
};

bench_row *report_row(const char *name)
{
    if (nrows == sizeof rows / sizeof rows[0])
        bench_die("too many table rows");
    bench_row *r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    return r;
}

void report_pair(bench_row *r, int i, const bench_pk_run *a, peer_time b)
{
    if (i < 0 || i >= MAX_RUNS)
        bench_die("run index %d out of range", i);
    r->pk[i] = a->seconds;
    r->pk_cpu[i] = a->cpu;
    r->peer[i] = b.wall;
    r->peer_cpu[i] = b.cpu;
    r->ratio[r->ratios] = b.wall / a->seconds;
    r->cpu_ratio[r->ratios] = a->cpu > 0 ? b.cpu / a->cpu : 0;
    r->ratios++;
    r->pk_divisors = a->divisors_tested;
}

static void print_secs(int width, double s)
{
    if (s != s)
        printf(" %*s", width, "-");
    else
        printf(" %*.3f", width, s);
}

static void print_ratio(int width, const double *v, size_t n)
{
    if (n == 0)
        printf(" %*s", width, "-");
    else
        printf(" %*.1fx", width - 1, bench_median(v, n));
}

static void print_rate(int width, uint64_t divisors, double s)
{
    if (s != s || s <= 0 || divisors == 0)
        printf(" %*s", width, "-");
    else
        printf(" %*.4g", width, (double)divisors / s / 1e6);
}

/* The 1-minute load average and the online CPUs, to judge the noise. */
void report_load(const char *when)
{
    double load = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fscanf(f, "%lf", &load) != 1)
            load = -1;
        fclose(f);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (load >= 0)
        printf("load average (1 min) %s: %.2f on %ld CPUs\n", when, load, cpus);
    else
        printf("online CPUs: %ld (no /proc/loadavg)\n", cpus);
}

/* A duration with its unit (us below 10 ms, ms above), in one of a few
 * static slots so several can appear in one printf. */
static const char *fmt_dur(int slot, double s)
{
    static char buf[8][24];
    char *b = buf[slot % 8];
    if (s != s)
        snprintf(b, sizeof buf[0], "-");
    else if (s < 10e-3)
        snprintf(b, sizeof buf[0], "%.1f us", s * 1e6);
    else
        snprintf(b, sizeof buf[0], "%.1f ms", s * 1e3);
    return b;
}

void report_print(void)
{
    if (nrows > 0)
        printf("\n%-10s %-5s %-12s %4s %9s %9s %10s %10s %8s %9s %10s %8s %10s %11s  %s\n",
               "workload", "path", "simd", "runs", "PK med s", "PK min s", "peer med s",
               "peer min s", "peer/PK", "PK cpu s", "peer cpu s", "cpu rat", "PK Mdiv/s",
               "peer Mdiv/s", "note");
    for (size_t i = 0; i < nrows; i++) {
        bench_row *r = &rows[i];
        size_t n = (size_t)r->runs, pn = (size_t)r->peer_runs;
        double pkm = bench_median(r->pk, n);
        double pem = bench_median(r->peer, pn);
        printf("%-10s %-5s %-12s %4d", r->name, r->path ? r->path : "?", r->simd, r->runs);
        print_secs(9, pkm);
        print_secs(9, bench_min(r->pk, n));
        print_secs(10, pem);
        print_secs(10, bench_min(r->peer, pn));
        print_ratio(8, r->ratio, (size_t)r->ratios);
        print_secs(9, bench_median(r->pk_cpu, n));
        print_secs(10, bench_median(r->peer_cpu, pn));
        print_ratio(8, r->cpu_ratio, (size_t)r->ratios);
        print_rate(10, r->pk_divisors, pkm);
        print_rate(11, r->peer_divisors, pem);
        printf("  %s\n", r->note);
    }
    if (report_split.pairs > 0) {
        printf("\nW1b split by divisor range, %d pairs: 1 thread med %.3f s (min %.3f), "
               "2 threads med %.3f s (min %.3f), 1-thread/2-thread %.2fx (median of pairs); "
               "the pieces ran on a CPU %.0f%% of their wall time (median)\n",
               report_split.pairs, bench_median(report_split.one, (size_t)report_split.pairs),
               bench_min(report_split.one, (size_t)report_split.pairs),
               bench_median(report_split.two, (size_t)report_split.pairs),
               bench_min(report_split.two, (size_t)report_split.pairs),
               bench_median(report_split.ratio, (size_t)report_split.pairs),
               100.0 * bench_median(report_split.cpu_share, (size_t)report_split.pairs));
    }
    int any = 0;
    for (int i = 0; i < LAT_ROWS; i++)
        any |= report_latency[i].ran || report_latency[i].skipped;
    if (any) {
        printf("\n%-24s %-4s %7s %6s %6s | %10s %10s %10s | %10s %10s %10s\n",
               "interrupt latency", "path", "samples", "missed", "jobs", "wall med", "wall p99",
               "wall worst", "cpu med", "cpu p99", "cpu worst");
        for (int i = 0; i < LAT_ROWS; i++) {
            bench_lat_row *l = &report_latency[i];
            if (l->skipped) {
                printf("%-24s %s\n", l->name, l->skipped);
                continue;
            }
            if (!l->ran)
                continue;
            printf("%-24s %-4s %7zu %6zu %6zu | %10s %10s %10s | %10s %10s %10s\n", l->name,
                   bench_path_name(l->l.path), l->l.samples, l->l.missed, l->l.finished,
                   fmt_dur(0, l->l.median_s), fmt_dur(1, l->l.p99_s), fmt_dur(2, l->l.worst_s),
                   fmt_dur(3, l->l.cpu_median_s), fmt_dur(4, l->l.cpu_p99_s),
                   fmt_dur(5, l->l.cpu_worst_s));
        }
    }
}

