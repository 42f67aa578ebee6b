/*
 * bench.h — internal declarations shared by the files of the kernel
 * benchmark harness (pk-bench). Nothing here is part of PrimeKit.
 */
#ifndef PK_BENCH_H
#define PK_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include <primekit.h>

/* A budget large enough that one pk_job_step runs a whole workload, but far
 * enough from UINT64_MAX that "work_done + budget" cannot wrap. */
#define BENCH_BIG_BUDGET (UINT64_C(1) << 62)

/* ------------------------------------------------------------- util.c */

double bench_now(void);                     /* CLOCK_MONOTONIC, seconds */
uint64_t bench_now_ns(void);                /* CLOCK_MONOTONIC, nanoseconds */
double bench_thread_cpu(void);              /* CPU time of the calling thread, seconds */
void bench_sleep_ns(uint64_t ns);
_Noreturn void bench_die(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void bench_note(const char *fmt, ...)       /* progress line on stderr */
    __attribute__((format(printf, 1, 2)));
void *bench_xmalloc(size_t n);
uint64_t bench_rng(uint64_t *state);        /* splitmix64 */

double bench_median(const double *v, size_t n);
double bench_min(const double *v, size_t n);
double bench_max(const double *v, size_t n);
/* The q-quantile (0..1) by the nearest-rank rule: the smallest sample with at
 * least q*n samples at or below it. */
double bench_quantile(const double *v, size_t n, double q);

const char *bench_simd_name(int simd);
const char *bench_path_name(int path);

/* ------------------------------------------------------------ peers.c */

/* Odd-divisor loop with the hardware `n % d` on 64-bit n: tests 2, then every
 * odd d from 3 to limit. Returns the first divisor found (0 if none); stops
 * there when stop_at_first is set. *tested receives the number of divisors
 * tried. */
uint64_t peer_u64(uint64_t n, uint64_t limit, int stop_at_first, uint64_t *tested);

/* The same loop with `unsigned __int128 %` (n given as two 64-bit halves). */
uint64_t peer_u128(uint64_t n_hi, uint64_t n_lo, uint64_t limit, int stop_at_first,
                   uint64_t *tested);

/* Parses the decimal candidate, sieves the primes up to bound (Eratosthenes)
 * and calls mpz_divisible_ui_p once per prime. Returns the first prime factor
 * found (0 if none). *tested receives the number of primes tried. */
uint64_t peer_gmp(const char *decimal, uint32_t bound, uint64_t *tested);

/* ------------------------------------------------------- candidates.c */

/* A deterministic odd number of exactly `digits` decimal digits with no prime
 * factor below 2^63 (so none up to 10^7): a product of pseudo-random primes
 * from a fixed-seed GMP generator, with one last prime that sets the length.
 * Returns a malloc'ed decimal string. */
char *make_survivor(size_t digits, unsigned long seed);

/* 4294967291 * nextprime(2^95) as decimal (malloc'ed), plus its cofactor. */
char *make_w128(char **cofactor_out);

/* floor(sqrt(n)) of a decimal number, as uint64_t (n < 2^128). */
uint64_t decimal_isqrt_u64(const char *decimal);

/* ------------------------------------------------------------ pkrun.c */

/* What a finished PrimeKit job must report. */
typedef struct bench_expect {
    int is_prime;                 /* PK_PRIME_YES / _NO / _UNKNOWN */
    size_t factor_count;
    const char *const *factors;   /* ascending, exponent 1 each */
    const char *cofactor;         /* expected cofactor, decimal */
    int cofactor_status;          /* a pk_cofactor_status value */
} bench_expect;

typedef struct bench_pk_run {
    double seconds;               /* pk_job_create .. pk_job_result, wall clock */
    double cpu;                   /* the same span in CPU time of the calling thread */
    uint64_t divisors_tested;     /* from the final progress snapshot */
    int path;                     /* pk_progress.path right after create */
} bench_pk_run;

/* Options for a run: simd and an optional divisor range. */
void bench_options(pk_options *o, int simd, const char *from, const char *bound);

/* Creates a job, steps it to PK_DONE, reads the result (all timed), then
 * checks the answer against *expect and aborts loudly when it differs. */
bench_pk_run bench_pk_timed(const char *workload, const char *candidate,
                            const pk_options *opt, const bench_expect *expect);

/* Steps a job to PK_DONE; aborts on any other outcome. */
void bench_pk_finish(const char *workload, pk_job *job);

/* Checks a finished job against *expect; aborts loudly when it differs.
 * candidate is the decimal the job was created from. */
void bench_pk_check(const char *workload, const pk_job *job, const char *candidate,
                    const bench_expect *expect);

/* ------------------------------------------------------------ fresh.c */

/* Runs the survivor `candidate` (bound `bound`) once in a new process started
 * from the executable `self`, with a new pk_cache, empty or (cache_file not
 * NULL) filled by pk_cache_load inside the timed span; the child checks its
 * answer. Aborts when the child fails. */
bench_pk_run bench_run_fresh(const char *self, int simd, const char *bound,
                             const char *workload, const char *candidate, const char *cache_file);

/* The child's side (pk-bench --child-fresh SIMD BOUND [CACHE-FILE]): reads the
 * candidate from stdin, prints "seconds cpu-seconds divisors path". */
int bench_child_fresh(int simd, const char *bound, const char *cache_file);

/* The arithmetic floor of W2 (peers.c): parse `decimal`, P mod n for the
 * given P (the product of the primes to the bound, built before), one gcd.
 * Returns 1 when the gcd is 1. */
int peer_floor(const char *decimal, const void *primorial);

/* ---------------------------------------------------------- latency.c */

typedef struct bench_latency {
    size_t samples;               /* interrupts that landed inside a step */
    size_t missed;                /* the step had returned before the interrupt */
    size_t finished;              /* jobs that ran to the end (answers checked) */
    double median_s, p99_s, worst_s;              /* wall clock */
    double cpu_median_s, cpu_p99_s, cpu_worst_s;  /* CPU time of the stepping thread */
    int path;
} bench_latency;

/* Repeatedly runs one big pk_job_step on `candidate` while a second thread
 * calls pk_job_interrupt after a random delay in [min_delay, max_delay]
 * seconds; measures interrupt call -> step return, in wall time and in CPU
 * time of the stepping thread (which leaves out time it spent descheduled).
 * A step that returns PK_DONE after the interrupt was sent also counts: it
 * returned that long after the request. Stops after `want` samples or
 * `time_cap` seconds. A job that finishes (after many interrupted steps) has
 * its answer checked against *expect and is created again. */
bench_latency bench_interrupt_latency(const char *workload, const char *candidate,
                                      const pk_options *opt, const bench_expect *expect,
                                      size_t want,
                                      double min_delay, double max_delay,
                                      double time_cap, uint64_t seed);

/* --------------------------------------------------------- complete.c */

/* The complete-factorization rows (printed after the main table). */
void bench_complete(int quick, uint64_t seed);

/* ------------------------------------------------------------ words.c */

/* Word-size factoring rows (WF64, WF12, WS100, WS128), each when wanted(key). */
void words_workloads(int runs, int quick, int (*wanted)(const char *));

#endif /* PK_BENCH_H */
