/*
 * report.h — the figures pk-bench collects, and the table that prints them.
 * Internal to the benchmark.
 */
#ifndef PK_BENCH_REPORT_H
#define PK_BENCH_REPORT_H

#include "bench.h"

#define MAX_RUNS 100

/* One row of the main table: PrimeKit runs paired with peer runs. */
typedef struct bench_row {
    char name[32];
    const char *path;             /* "u64", "u128", "gmp" */
    char simd[24];                /* "requested>active", or "-" */
    int runs, peer_runs;
    double pk[MAX_RUNS], peer[MAX_RUNS], ratio[MAX_RUNS];
    double pk_cpu[MAX_RUNS], peer_cpu[MAX_RUNS], cpu_ratio[MAX_RUNS];
    int ratios;
    uint64_t pk_divisors, peer_divisors;
    char note[64];
} bench_row;

/* Wall and thread-CPU seconds of one peer run. */
typedef struct peer_time {
    double wall, cpu;
} peer_time;

#define TIME_PEER(pt, expr)                                                   \
    do {                                                                      \
        double c0_ = bench_thread_cpu(), w0_ = bench_now();                   \
        expr;                                                                 \
        (pt).wall = bench_now() - w0_;                                        \
        (pt).cpu = bench_thread_cpu() - c0_;                                  \
    } while (0)

/* A new, empty row at the end of the table. */
bench_row *report_row(const char *name);

/* Records pair i of a row: PrimeKit run a, peer run b (ratios included). */
void report_pair(bench_row *r, int i, const bench_pk_run *a, peer_time b);

/* The two-thread split of W1b. */
typedef struct bench_split {
    int pairs;
    double one[MAX_RUNS], two[MAX_RUNS], ratio[MAX_RUNS];
    double cpu_share[MAX_RUNS];   /* thread CPU / wall of the two pieces */
} bench_split;

extern bench_split report_split;

/* Interrupt-latency rows, in table order. */
enum {
    LAT_U64, LAT_U128, LAT_GMP5_COLD, LAT_GMP5_WARM, LAT_GMP6_COLD, LAT_GMP6_WARM, LAT_ROWS
};

typedef struct bench_lat_row {
    const char *name;
    bench_latency l;
    int ran;
    const char *skipped;          /* why the row did not run, or NULL */
} bench_lat_row;

extern bench_lat_row report_latency[LAT_ROWS];

/* Prints the main table, the split line and the latency table to stdout. */
void report_print(void);

/* Prints the 1-minute load average and the online CPUs. */
void report_load(const char *when);

#endif /* PK_BENCH_REPORT_H */
