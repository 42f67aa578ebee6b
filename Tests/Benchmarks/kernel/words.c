/*
 * words.c — word-size factoring workloads: the batch call
 * pk_factor_u64_array against coreutils `factor` (a child process reading
 * the same numbers on its standard input), and balanced semiprimes of 100
 * and 128 bits factored by a complete job each (trial division, the
 * word-size splitter's short pass, the quadratic sieve: what the job
 * pipeline does with such parts) against PARI/GP's `factor` (timed inside
 * gp). A peer that is not installed is skipped with a note. Every PrimeKit
 * answer is checked (the factors multiply back, each prime passes GMP's
 * test).
 */
#define _DEFAULT_SOURCE
#include "bench.h"
#include "report.h"

#include <gmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "factor/word.h"

/* Is `prog` an executable in PATH? */
static int in_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    char buf[4096];
    for (const char *p = path; *p;) {
        const char *e = strchr(p, ':');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n > 0 && n + strlen(prog) + 2 < sizeof buf) {
            memcpy(buf, p, n);
            buf[n] = '/';
            strcpy(buf + n + 1, prog);
            if (access(buf, X_OK) == 0)
                return 1;
        }
        p += n + (e ? 1 : 0);
    }
    return 0;
}

/*
 * Runs argv with `input` on its standard input (a temporary file, written
 * before the clock starts); its standard output is read into *out
 * (malloc'ed, NUL-terminated). Wall time from fork to exit; CPU time of the
 * child (user + system, from wait4). Returns the exit status.
 */
static int run_child(char *const argv[], const char *input, size_t len, char **out, peer_time *t)
{
    FILE *f = tmpfile();
    if (!f || fwrite(input, 1, len, f) != len || fflush(f) != 0)
        bench_die("cannot write a temporary file");
    rewind(f);
    int outp[2];
    if (pipe(outp))
        bench_die("pipe failed");
    double w0 = bench_now();
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork failed");
    if (pid == 0) {
        dup2(fileno(f), 0);
        dup2(outp[1], 1);
        close(outp[0]);
        close(outp[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(outp[1]);
    size_t cap = 1 << 20, have = 0;
    char *buf = bench_xmalloc(cap);
    for (;;) {
        if (have + 65537 > cap) {
            buf = realloc(buf, cap *= 2);
            if (!buf)
                bench_die("out of memory");
        }
        ssize_t r = read(outp[0], buf + have, 65536);
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    close(outp[0]);
    int status = 0;
    struct rusage ru;
    wait4(pid, &status, 0, &ru);
    t->wall = bench_now() - w0;
    t->cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
             ru.ru_stime.tv_usec / 1e6;
    fclose(f);
    buf[have] = 0;
    *out = buf;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void check_u64_answers(const char *name, const uint64_t *n, const pk_u64_answer *a, size_t count)
{
    mpz_t z;
    mpz_init(z);
    for (size_t i = 0; i < count; i++) {
        unsigned __int128 prod = 1;
        for (uint32_t j = 0; j < a[i].factor_count; j++) {
            mpz_set_ui(z, a[i].primes[j]);
            if (!mpz_probab_prime_p(z, 25) || (j && a[i].primes[j] <= a[i].primes[j - 1]))
                bench_die("%s: %llu: factor %llu is not prime or out of order", name,
                          (unsigned long long)n[i], (unsigned long long)a[i].primes[j]);
            for (uint8_t e = 0; e < a[i].exponents[j]; e++)
                prod *= a[i].primes[j];
        }
        if (prod != n[i] || a[i].n != n[i])
            bench_die("%s: %llu: the factors do not multiply back", name, (unsigned long long)n[i]);
    }
    mpz_clear(z);
}

/* One batch row: count numbers through pk_factor_u64_array, paired with coreutils factor. */
static void batch_row(const char *name, const uint64_t *n, size_t count, int runs)
{
    bench_row *r = report_row(name);
    r->path = "u64";
    snprintf(r->simd, sizeof r->simd, "-");
    char *text = bench_xmalloc(count * 21 + 1);
    size_t len = 0;
    for (size_t i = 0; i < count; i++)
        len += (size_t)sprintf(text + len, "%llu\n", (unsigned long long)n[i]);
    pk_u64_answer *a = bench_xmalloc(count * sizeof *a);
    const int peer = in_path("factor");
    if (!peer)
        snprintf(r->note, sizeof r->note, "coreutils factor not found: peer skipped");
    else
        snprintf(r->note, sizeof r->note, "peer: coreutils factor, stdin, own process");
    for (int i = 0; i < runs; i++) {
        bench_pk_run run = {0};
        double c0 = bench_thread_cpu(), w0 = bench_now();
        int rc = pk_factor_u64_array(n, count, a, sizeof *a);
        run.seconds = bench_now() - w0;
        run.cpu = bench_thread_cpu() - c0;
        run.path = PK_PATH_U64;
        if (rc != PK_OK)
            bench_die("%s: pk_factor_u64_array returned %s", name, pk_status_name(rc));
        check_u64_answers(name, n, a, count);
        peer_time b = {0.0 / 0.0, 0.0 / 0.0};
        if (peer) {
            char *out = NULL;
            char *argv[] = {"factor", NULL};
            int st = run_child(argv, text, len, &out, &b);
            size_t lines = 0;
            for (char *p = out; *p; p++)
                lines += *p == '\n';
            if (st != 0 || lines != count)
                bench_die("%s: coreutils factor exited %d with %zu lines for %zu numbers", name, st, lines, count);
            free(out);
            report_pair(r, i, &run, b);
            r->peer_runs = i + 1;
        } else {
            r->pk[i] = run.seconds;
            r->pk_cpu[i] = run.cpu;
        }
        r->runs = i + 1;
        bench_note("%s run %d/%d: PrimeKit %.4f s, coreutils %.4f s, ratio %.1f", name, i + 1, runs, run.seconds,
                   b.wall, b.wall / run.seconds);
    }
    free(a);
    free(text);
}

/* Balanced semiprimes: two primes of bits/2 bits each (GMP's generator, fixed seed). */
static void balanced(gmp_randstate_t st, unsigned bits, mpz_t out)
{
    mpz_t p, q;
    mpz_inits(p, q, NULL);
    do {
        mpz_urandomb(p, st, bits / 2);
        mpz_setbit(p, bits / 2 - 1);
        mpz_nextprime(p, p);
        mpz_urandomb(q, st, bits - bits / 2);
        mpz_setbit(q, bits - bits / 2 - 1);
        mpz_nextprime(q, q);
        mpz_mul(out, p, q);
    } while (mpz_sizeinbase(out, 2) != bits || mpz_cmp(p, q) == 0);
    mpz_clears(p, q, NULL);
}

static unsigned __int128 to_u128(const mpz_t z)
{
    uint64_t w[2] = {0, 0};
    mpz_export(w, NULL, -1, sizeof(uint64_t), 0, 0, z);
    return (unsigned __int128)w[0] | ((unsigned __int128)w[1] << 64);
}

/* PARI/GP's time in seconds for factoring every number of v (timed inside gp), or -1. */
static double gp_time(char **dec, size_t count)
{
    size_t cap = 200 + count * 45;
    char *script = bench_xmalloc(cap);
    size_t len = (size_t)snprintf(script, cap, "default(parisize,10^8)\nv=[");
    for (size_t i = 0; i < count; i++)
        len += (size_t)snprintf(script + len, cap - len, "%s%s", i ? "," : "", dec[i]);
    len += (size_t)snprintf(script + len, cap - len, "]; gettime(); for(i=1,#v,factor(v[i])); print(gettime())\n");
    char *out = NULL;
    peer_time t;
    char *argv[] = {"gp", "-q", "-f", NULL};
    int st = run_child(argv, script, len, &out, &t);
    double ms = -1;
    /* the last line is the time in ms (gp may print warnings before it) */
    if (st == 0) {
        char *last = out, *p;
        while ((p = strchr(last, '\n')) != NULL && p[1] != 0)
            last = p + 1;
        if (sscanf(last, "%lf", &ms) != 1)
            ms = -1;
    }
    free(out);
    free(script);
    return ms < 0 ? -1 : ms / 1e3;
}

/* Factor the semiprime n (decimal) with a complete job; check the answer. */
static void job_factor(const char *name, const char *n)
{
    pk_options o;
    pk_options_init(&o);
    pk_job *job = NULL;
    if (pk_job_create(n, &o, &job) != PK_OK)
        bench_die("%s: %s: pk_job_create failed", name, n);
    int st;
    while ((st = pk_job_step(job, (uint64_t)1 << 24)) == PK_MORE) {
    }
    pk_result r;
    memset(&r, 0, sizeof r);
    r.size = sizeof r;
    if (st != PK_DONE || pk_job_result(job, &r) != PK_OK || !r.complete || r.factor_count != 2)
        bench_die("%s: %s: the job did not factor it", name, n);
    mpz_t prod, p;
    mpz_inits(prod, p, NULL);
    mpz_set_ui(prod, 1);
    for (size_t i = 0; i < r.factor_count; i++) {
        char buf[64];
        uint64_t e;
        pk_job_factor(job, i, buf, sizeof buf, NULL, &e);
        mpz_set_str(p, buf, 10);
        if (!mpz_probab_prime_p(p, 25))
            bench_die("%s: %s: listed factor %s is not prime", name, n, buf);
        mpz_pow_ui(p, p, e);
        mpz_mul(prod, prod, p);
    }
    mpz_set_str(p, n, 10);
    if (mpz_cmp(prod, p) != 0)
        bench_die("%s: %s: the factors do not multiply back", name, n);
    mpz_clears(prod, p, NULL);
    pk_job_destroy(job);
}

/* count balanced semiprimes of `bits` bits through complete jobs, paired with PARI/GP when installed. */
static void split_row(const char *name, unsigned bits, size_t count, int runs, unsigned long seed)
{
    bench_row *r = report_row(name);
    r->path = "u128";
    snprintf(r->simd, sizeof r->simd, "-");
    gmp_randstate_t st;
    gmp_randinit_default(st);
    gmp_randseed_ui(st, seed);
    mpz_t z;
    mpz_init(z);
    unsigned __int128 *n = bench_xmalloc(count * sizeof *n);
    char **dec = bench_xmalloc(count * sizeof *dec);
    for (size_t i = 0; i < count; i++) {
        balanced(st, bits, z);
        n[i] = to_u128(z);
        dec[i] = mpz_get_str(NULL, 10, z);
    }
    const int peer = in_path("gp");
    snprintf(r->note, sizeof r->note, peer ? "per number: PK %%.2f ms, gp %%.2f ms" : "gp not found: peer skipped");
    double per_pk = 0, per_gp = 0;
    for (int i = 0; i < runs; i++) {
        bench_pk_run run = {0};
        double c0 = bench_thread_cpu(), w0 = bench_now();
        for (size_t k = 0; k < count; k++)
            job_factor(name, dec[k]);
        run.seconds = bench_now() - w0;
        run.cpu = bench_thread_cpu() - c0;
        run.path = PK_PATH_U128;
        peer_time b = {0.0 / 0.0, 0.0 / 0.0};
        if (peer) {
            double g = gp_time(dec, count);
            if (g > 0) {
                b.wall = b.cpu = g; /* gp's own clock: CPU time of the factoring loop */
                report_pair(r, i, &run, b);
                r->peer_runs = i + 1;
            }
        }
        if (!(b.wall > 0)) {
            r->pk[i] = run.seconds;
            r->pk_cpu[i] = run.cpu;
        }
        r->runs = i + 1;
        bench_note("%s run %d/%d: PrimeKit %.3f s (%.2f ms each), gp %.3f s", name, i + 1, runs, run.seconds,
                   run.seconds / count * 1e3, b.wall);
    }
    /* per number, in CPU time (gp's clock is CPU time too) */
    per_pk = bench_median(r->pk_cpu, (size_t)r->runs) / count * 1e3;
    per_gp = r->peer_runs ? bench_median(r->peer_cpu, (size_t)r->peer_runs) / count * 1e3 : 0;
    if (peer && r->peer_runs)
        snprintf(r->note, sizeof r->note, "cpu per number: PK %.2f ms, gp %.2f ms", per_pk, per_gp);
    else
        snprintf(r->note, sizeof r->note, "cpu per number: PK %.2f ms; no gp time: peer skipped", per_pk);
    for (size_t i = 0; i < count; i++)
        free(dec[i]);
    free(dec);
    free(n);
    mpz_clear(z);
    gmp_randclear(st);
}

void words_workloads(int runs, int quick, int (*wanted)(const char *))
{
    if (wanted("wf64")) {
        /* 10^4 balanced 64-bit semiprimes (two 32-bit primes) */
        size_t count = 10000;
        uint64_t *n = bench_xmalloc(count * sizeof *n);
        gmp_randstate_t st;
        gmp_randinit_default(st);
        gmp_randseed_ui(st, 20261126ul);
        mpz_t z;
        mpz_init(z);
        for (size_t i = 0; i < count; i++) {
            balanced(st, 64, z);
            n[i] = mpz_get_ui(z);
        }
        mpz_clear(z);
        gmp_randclear(st);
        fprintf(stderr, "WF64: 10^4 balanced 64-bit semiprimes\n");
        batch_row("WF64", n, count, runs);
        free(n);
    }
    if (wanted("wf12")) {
        /* 10^5 consecutive numbers from 10^12 */
        size_t count = 100000;
        uint64_t *n = bench_xmalloc(count * sizeof *n);
        for (size_t i = 0; i < count; i++)
            n[i] = UINT64_C(1000000000000) + i;
        fprintf(stderr, "WF12: 10^5 numbers from 10^12\n");
        batch_row("WF12", n, count, runs);
        free(n);
    }
    if (wanted("ws100")) {
        fprintf(stderr, "WS100: 50 balanced 100-bit semiprimes, one complete job each\n");
        split_row("WS100", 100, 50, quick ? 1 : (runs < 3 ? runs : 3), 100ul);
    }
    if (wanted("ws128")) {
        fprintf(stderr, "WS128: 30 balanced 128-bit semiprimes, one complete job each\n");
        split_row("WS128", 128, 30, quick ? 1 : (runs < 3 ? runs : 3), 128ul);
    }
}
