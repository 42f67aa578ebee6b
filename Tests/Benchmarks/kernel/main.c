/*
 * main.c — pk-bench: the PrimeKit kernel benchmark (README.md in this directory).
 *
 * Runs each workload through the public C API and through a plain C peer in
 * the same process, interleaved (PrimeKit, peer, PrimeKit, peer, ...), checks
 * every PrimeKit answer, and prints one table of medians and same-run ratios,
 * followed by the two-thread split and the interrupt latencies.
 *
 *   pk-bench [--quick] [--runs N] [--simd auto|portable|avx2|avx512] [--only LIST]
 *
 * See README.md for the columns.
 */
#include "bench.h"
#include "report.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmp.h>

#define W1_N      "18446744073709551557"
#define W1B_P     "4294967279"
#define W1B_Q     "4294967291"
#define W1B_N     "18446743979220271189"      /* W1B_P * W1B_Q */
#define W2_BOUND  10000000u
#define W2_BOUND_S "10000000"
#define W2_DIGITS  100000u
#define W2P_DIGITS 1000000u
#define W2_SEED    20261123ul
#define W2P_SEED   20261124ul
#define TWO32      UINT64_C(4294967296)

/* ------------------------------------------------------------ settings */

typedef struct settings {
    int quick;
    int runs;
    int simd;
    int simd_forced;
    const char *only;             /* comma-separated workload keys, or NULL */
    const char *self;             /* path of this executable, for fresh processes */
    pk_cache *cache;              /* this process's cache for warm GMP-path jobs */
} settings;

static settings S;

static int wanted(const char *key)
{
    if (S.only == NULL)
        return 1;
    size_t k = strlen(key);
    for (const char *p = S.only; *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == k && strncmp(p, key, k) == 0)
            return 1;
        p += n + (e ? 1 : 0);
    }
    return 0;
}

/* ---------------------------------------------------------------- CPU */

static int cpu_has(const char *flag)
{
#if defined(__x86_64__) || defined(__i386__)
    if (strcmp(flag, "avx2") == 0) return !!__builtin_cpu_supports("avx2");
    if (strcmp(flag, "fma") == 0) return !!__builtin_cpu_supports("fma");
    if (strcmp(flag, "avx512f") == 0) return !!__builtin_cpu_supports("avx512f");
    if (strcmp(flag, "avx512dq") == 0) return !!__builtin_cpu_supports("avx512dq");
#else
    (void)flag;
#endif
    return 0;
}

/* What the CPU flags say automatic dispatch should pick. */
static int simd_expected(void)
{
    if (cpu_has("avx512f") && cpu_has("avx512dq"))
        return PK_SIMD_AVX512;
    if (cpu_has("avx2") && cpu_has("fma"))
        return PK_SIMD_AVX2;
    return PK_SIMD_PORTABLE;
}

/* "requested>active" as the kernel reports it (pk_simd_active), e.g.
 * "auto>avx512"; "-" on the GMP path, where the option does not apply. */
static void simd_label(int simd, int path, char *buf, size_t cap)
{
    if (path == PK_PATH_GMP) {
        snprintf(buf, cap, "-");
        return;
    }
    int active = pk_simd_active(simd);
    if (active < 0)
        bench_die("pk_simd_active(%d) returned %s", simd, pk_status_name(active));
    snprintf(buf, cap, "%s>%s", bench_simd_name(simd), bench_simd_name(active));
}

/* ---------------------------------------------------------- workloads */

static void u64_workload(const char *key, const char *name, const char *n_dec,
                         const bench_expect *ex, int stop_at_first, uint64_t want_peer)
{
    if (!wanted(key))
        return;
    bench_row *r = report_row(name);
    pk_options opt;
    bench_options(&opt, S.simd, NULL, NULL);
    uint64_t n = strtoull(n_dec, NULL, 10);
    uint64_t limit = decimal_isqrt_u64(n_dec);
    if (limit > TWO32)
        limit = TWO32;
    fprintf(stderr, "%s: n = %s, divisors to %llu\n", name, n_dec, (unsigned long long)limit);
    for (int i = 0; i < S.runs; i++) {
        bench_pk_run a = bench_pk_timed(name, n_dec, &opt, ex);
        uint64_t tested = 0, f = 0;
        peer_time b;
        TIME_PEER(b, f = peer_u64(n, limit, stop_at_first, &tested));
        if (f != want_peer)
            bench_die("%s: the peer found %llu, expected %llu", name, (unsigned long long)f,
                      (unsigned long long)want_peer);
        r->path = bench_path_name(a.path);
        simd_label(S.simd, a.path, r->simd, sizeof r->simd);
        if (a.path != PK_PATH_U64)
            bench_die("%s: job started on path %s, expected u64", name, r->path);
        report_pair(r, i, &a, b);
        r->peer_divisors = tested;
        bench_note("run %d/%d [%s, simd %s]: PrimeKit %.3f s, peer %.3f s, ratio %.1f", i + 1,
                   S.runs, r->path, r->simd, a.seconds, b.wall, b.wall / a.seconds);
    }
    r->runs = r->peer_runs = S.runs;
}

static void w128_workload(const char *n_dec, const char *cofactor)
{
    if (!wanted("w128"))
        return;
#ifndef __SIZEOF_INT128__
    (void)n_dec;
    (void)cofactor;
    fprintf(stderr, "W128: skipped (no unsigned __int128 in this compiler)\n");
#else
    bench_row *r = report_row("W128");
    const char *factors[] = {W1B_Q};
    bench_expect ex = {PK_PRIME_NO, 1, factors, cofactor, PK_COFACTOR_PROBABLE_PRIME};
    pk_options opt;
    bench_options(&opt, S.simd, NULL, NULL);
    unsigned __int128 n = 0;
    for (const char *p = n_dec; *p; p++)
        n = n * 10 + (unsigned)(*p - '0');
    uint64_t hi = (uint64_t)(n >> 64), lo = (uint64_t)n;
    fprintf(stderr, "W128: n = %s, divisors to 2^32\n", n_dec);
    for (int i = 0; i < S.runs; i++) {
        bench_pk_run a = bench_pk_timed("W128", n_dec, &opt, &ex);
        uint64_t tested = 0, f = 0;
        peer_time b;
        TIME_PEER(b, f = peer_u128(hi, lo, TWO32, 0, &tested));
        if (f != 4294967291u)
            bench_die("W128: the peer found %llu, expected 4294967291", (unsigned long long)f);
        if (a.path != PK_PATH_U128)
            bench_die("W128: job started on path %s, expected u128", bench_path_name(a.path));
        r->path = bench_path_name(a.path);
        simd_label(S.simd, a.path, r->simd, sizeof r->simd);
        report_pair(r, i, &a, b);
        r->peer_divisors = tested;
        bench_note("run %d/%d [%s, simd %s]: PrimeKit %.3f s, peer %.3f s, ratio %.1f", i + 1,
                   S.runs, r->path, r->simd, a.seconds, b.wall, b.wall / a.seconds);
    }
    r->runs = r->peer_runs = S.runs;
#endif
}

/* Median of v[0..n) (v is sorted in place). */
static double median_of(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* W2, interleaved per run: a fresh process that loads the cache file this
 * process saved (A), a fresh process without it (cold), warm in this process
 * (A'), the arithmetic floor (F), the peer (B). */
static void w2_workload(const char *cand)
{
    bench_row *fresh = report_row("W2 fresh");
    bench_row *cold = report_row("W2 cold");
    bench_row *warm = report_row("W2 warm");
    bench_row *flr = report_row("W2 floor");
    bench_expect ex = {PK_PRIME_UNKNOWN, 0, NULL, cand, PK_COFACTOR_UNKNOWN};
    pk_options opt;
    bench_options(&opt, S.simd, NULL, W2_BOUND_S);
    opt.cache = S.cache;

    /* The first job on this candidate with this process's cache is the
     * warm-up: it fills the cache, which is then saved (pairing its nodes)
     * for the fresh processes. */
    bench_pk_run w = bench_pk_timed("W2 warm-up", cand, &opt, &ex);
    const char *tmp = getenv("TMPDIR");
    char dir[512], file[600];
    snprintf(dir, sizeof dir, "%s/pk-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        bench_die("W2: mkdtemp %s failed", dir);
    snprintf(file, sizeof file, "%s/primes.pkcache", dir);
    double t0 = bench_now();
    int st = pk_cache_save(S.cache, file);
    double saved = bench_now() - t0;
    if (st != PK_OK)
        bench_die("W2: pk_cache_save returned %s", pk_status_name(st));
    struct stat sb;
    if (stat(file, &sb) != 0)
        bench_die("W2: no cache file after pk_cache_save");
    bench_note("warm-up run in this process: %.3f s, pk_cache_save %.3f s, %lld bytes (not counted)",
               w.seconds, saved, (long long)sb.st_size);

    mpz_t P;
    mpz_init(P);
    mpz_primorial_ui(P, W2_BOUND);
    double warm_floor[MAX_RUNS], fresh_floor[MAX_RUNS];
    for (int i = 0; i < S.runs; i++) {
        bench_pk_run a = bench_run_fresh(S.self, S.simd, W2_BOUND_S, "W2 fresh", cand, file);
        bench_pk_run c = bench_run_fresh(S.self, S.simd, W2_BOUND_S, "W2 cold", cand, NULL);
        bench_pk_run a2 = bench_pk_timed("W2 warm", cand, &opt, &ex);
        peer_time fl;
        int coprime = 0;
        TIME_PEER(fl, coprime = peer_floor(cand, P));
        if (!coprime)
            bench_die("W2: the floor's gcd is not 1 for a survivor");
        uint64_t tested = 0, f = 0;
        peer_time b;
        TIME_PEER(b, f = peer_gmp(cand, W2_BOUND, &tested));
        if (f != 0)
            bench_die("W2: the peer found the factor %llu in a survivor", (unsigned long long)f);
        if (a.path != PK_PATH_GMP || a2.path != PK_PATH_GMP || c.path != PK_PATH_GMP)
            bench_die("W2: job started on path %s, expected gmp", bench_path_name(a.path));
        bench_pk_run fr = {.seconds = fl.wall, .cpu = fl.cpu, .path = PK_PATH_GMP};
        report_pair(fresh, i, &a, b);
        report_pair(cold, i, &c, b);
        report_pair(warm, i, &a2, b);
        report_pair(flr, i, &fr, b);
        warm_floor[i] = a2.seconds / fl.wall;
        fresh_floor[i] = a.seconds / fl.wall;
        fresh->peer_divisors = cold->peer_divisors = warm->peer_divisors = flr->peer_divisors = tested;
        bench_note("run %d/%d: PrimeKit fresh %.3f s, cold %.3f s, warm %.3f s, floor %.3f s, peer %.3f s",
                   i + 1, S.runs, a.seconds, c.seconds, a2.seconds, fl.wall, b.wall);
    }
    mpz_clear(P);
    unlink(file);
    rmdir(dir);
    for (bench_row *r = fresh; r <= flr; r++) {
        r->runs = r->peer_runs = S.runs;
        r->path = "gmp";
        snprintf(r->simd, sizeof r->simd, "-");
    }
    snprintf(fresh->note, sizeof fresh->note, "loads the cache file; %.2fx the floor",
             median_of(fresh_floor, S.runs));
    snprintf(cold->note, sizeof cold->note, "no cache file");
    snprintf(warm->note, sizeof warm->note, "%.2fx the floor", median_of(warm_floor, S.runs));
    snprintf(flr->note, sizeof flr->note, "GMP: parse, P mod n, gcd; not PrimeKit");
}

/* W2': PrimeKit in fresh processes (up to --runs, fewer when a run is slow),
 * the ~25 s peer once. */
static void w2p_workload(const char *cand)
{
    bench_row *r = report_row("W2' fresh");
    peer_time b = {0, 0};
    int pk_runs = 0;
    for (int i = 0; i < S.runs; i++) {
        bench_pk_run a = bench_run_fresh(S.self, S.simd, W2_BOUND_S, "W2'", cand, NULL);
        if (a.path != PK_PATH_GMP)
            bench_die("W2': job started on path %s, expected gmp", bench_path_name(a.path));
        bench_note("PrimeKit run %d: %.3f s", i + 1, a.seconds);
        if (i == 0) {
            uint64_t tested = 0, f = 0;
            TIME_PEER(b, f = peer_gmp(cand, W2_BOUND, &tested));
            if (f != 0)
                bench_die("W2': the peer found the factor %llu in a survivor",
                          (unsigned long long)f);
            r->peer_divisors = tested;
            bench_note("peer (once): %.3f s", b.wall);
        }
        /* Every PrimeKit run is compared with the one peer run. */
        report_pair(r, pk_runs++, &a, b);
        if (a.seconds > 5.0)
            break;  /* a slow kernel: one run says enough */
    }
    r->runs = pk_runs;
    r->peer_runs = 1;
    r->path = "gmp";
    snprintf(r->simd, sizeof r->simd, "-");
    snprintf(r->note, sizeof r->note, "peer ran once");
}

/* ---------------------------------------------------- two-thread split */

typedef struct piece {
    const char *from, *bound;
    pk_job *job;
    double wall, cpu;     /* this thread's own time, to expose a busy machine */
} piece;

static void *piece_thread(void *arg)
{
    piece *p = arg;
    double w0 = bench_now(), c0 = bench_thread_cpu();
    pk_options opt;
    bench_options(&opt, S.simd, p->from, p->bound);
    int st = pk_job_create(W1B_N, &opt, &p->job);
    if (st != PK_OK)
        bench_die("W1b split: pk_job_create returned %s", pk_status_name(st));
    bench_pk_finish("W1b split", p->job);
    p->wall = bench_now() - w0;
    p->cpu = bench_thread_cpu() - c0;
    return NULL;
}

static void split_workload(void)
{
    const char *factors[] = {W1B_P, W1B_Q};
    bench_expect ex = {PK_PRIME_NO, 2, factors, "1", PK_COFACTOR_ONE};
    uint64_t root = decimal_isqrt_u64(W1B_N);
    char mid_s[24], mid1_s[24], root_s[24];
    snprintf(mid_s, sizeof mid_s, "%llu", (unsigned long long)(root / 2));
    snprintf(mid1_s, sizeof mid1_s, "%llu", (unsigned long long)(root / 2 + 1));
    snprintf(root_s, sizeof root_s, "%llu", (unsigned long long)root);
    pk_options opt;
    bench_options(&opt, S.simd, NULL, NULL);
    int pairs = S.quick ? 2 : S.runs;
    fprintf(stderr, "W1b split: [2, %s] and [%s, %s] on two threads vs one thread\n", mid_s,
            mid1_s, root_s);
    for (int i = 0; i < pairs; i++) {
        bench_pk_run a = bench_pk_timed("W1b 1 thread", W1B_N, &opt, &ex);

        piece p[2] = {{"2", mid_s, NULL, 0, 0}, {mid1_s, root_s, NULL, 0, 0}};
        pthread_t th[2];
        double t0 = bench_now();
        for (int k = 0; k < 2; k++)
            if (pthread_create(&th[k], NULL, piece_thread, &p[k]) != 0)
                bench_die("pthread_create failed");
        for (int k = 0; k < 2; k++)
            pthread_join(th[k], NULL);
        pk_job *pieces[2] = {p[0].job, p[1].job}, *merged = NULL;
        int st = pk_job_merge(pieces, 2, &merged);
        double b = bench_now() - t0;
        if (st != PK_OK)
            bench_die("W1b split: pk_job_merge returned %s", pk_status_name(st));
        bench_pk_check("W1b split (merged)", merged, W1B_N, &ex);
        pk_job_destroy(merged);
        pk_job_destroy(p[0].job);
        pk_job_destroy(p[1].job);

        report_split.one[i] = a.seconds;
        report_split.two[i] = b;
        report_split.ratio[i] = a.seconds / b;
        bench_note("pair %d/%d: 1 thread %.3f s, 2 threads %.3f s, ratio %.2f "
                   "(pieces: wall %.3f + %.3f s, thread CPU %.3f + %.3f s)",
                   i + 1, pairs, a.seconds, b, a.seconds / b, p[0].wall, p[1].wall, p[0].cpu,
                   p[1].cpu);
        report_split.cpu_share[i] = (p[0].cpu + p[1].cpu) / (p[0].wall + p[1].wall);
    }
    report_split.pairs = pairs;
}

/* ------------------------------------------------------------ latency */

static void latency_one(int idx, const char *cand, const char *bound, const bench_expect *ex,
                        size_t want, double lo, double hi, double cap, int want_path,
                        pk_cache *cache)
{
    bench_lat_row *row = &report_latency[idx];
    pk_options opt;
    bench_options(&opt, S.simd, NULL, bound);
    opt.cache = cache;
    if (cache != NULL) {
        /* One untimed job first, so the cache holds what this size needs. */
        bench_pk_run w = bench_pk_timed(row->name, cand, &opt, ex);
        bench_note("cache warm-up job: %.3f s", w.seconds);
    }
    fprintf(stderr, "latency %s: up to %zu samples, delays %.1f-%.1f ms\n", row->name, want,
            lo * 1e3, hi * 1e3);
    row->l = bench_interrupt_latency(row->name, cand, &opt, ex, want, lo, hi, cap,
                                     UINT64_C(0x5EED0000) + (uint64_t)idx);
    row->ran = 1;
    if (row->l.path != want_path)
        bench_die("latency %s: job on path %s", row->name, bench_path_name(row->l.path));
    bench_note("%zu samples (%zu missed, %zu jobs finished), wall median %.1f us, worst %.1f us; "
               "CPU median %.1f us, worst %.1f us",
               row->l.samples, row->l.missed, row->l.finished, row->l.median_s * 1e6,
               row->l.worst_s * 1e6, row->l.cpu_median_s * 1e6, row->l.cpu_worst_s * 1e6);
}

/* --------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: pk-bench [--quick] [--runs N] [--simd auto|portable|avx2|avx512]\n"
            "                [--only w1,w1b,w128,w2,w2p,split,lat,complete,wf64,wf12,ws100,ws128]\n"
            "  --quick   1 run per workload, no W2' and no 1,000,000-digit latency (< 1 min)\n"
            "  --runs N  timed runs per workload (default 5; the W2' peer always runs once)\n"
            "  --simd S  force pk_options.simd (default: pk_options_init, i.e. PRIMEKIT_SIMD or auto)\n"
            "  --only L  run only the listed workloads\n");
}

static int parse_simd(const char *s)
{
    if (strcmp(s, "auto") == 0) return PK_SIMD_AUTO;
    if (strcmp(s, "portable") == 0) return PK_SIMD_PORTABLE;
    if (strcmp(s, "avx2") == 0) return PK_SIMD_AVX2;
    if (strcmp(s, "avx512") == 0) return PK_SIMD_AVX512;
    fprintf(stderr, "pk-bench: unknown --simd value '%s'\n", s);
    usage(stderr);
    exit(1);
}

int main(int argc, char **argv)
{
    if ((argc == 4 || argc == 5) && strcmp(argv[1], "--child-fresh") == 0)
        return bench_child_fresh(atoi(argv[2]), argv[3], argc == 5 ? argv[4] : NULL);

    static char self[4096];
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl > 0) {
        self[sl] = '\0';
        S.self = self;
    } else {
        S.self = argv[0];
    }

    pk_options defaults;
    pk_options_init(&defaults);
    S.simd = defaults.simd;
    int runs = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            S.quick = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > MAX_RUNS) {
                fprintf(stderr, "pk-bench: --runs must be 1..%d\n", MAX_RUNS);
                return 1;
            }
        } else if (strcmp(argv[i], "--simd") == 0 && i + 1 < argc) {
            S.simd = parse_simd(argv[++i]);
            S.simd_forced = 1;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            S.only = argv[++i];
            static const char *const keys[] = {"w1", "w1b", "w128", "w2", "w2p", "split", "lat", "complete",
                                               "wf64", "wf12", "ws100", "ws128"};
            for (const char *p = S.only; *p;) {
                size_t len = strcspn(p, ",");
                int known = 0;
                for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                    known |= strlen(keys[k]) == len && strncmp(p, keys[k], len) == 0;
                if (!known) {
                    fprintf(stderr, "pk-bench: unknown workload '%.*s' in --only\n", (int)len, p);
                    usage(stderr);
                    return 1;
                }
                p += len + (p[len] == ',');
            }
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "pk-bench: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 1;
        }
    }
    S.runs = runs > 0 ? runs : (S.quick ? 1 : 5);
    signal(SIGPIPE, SIG_IGN);

    const char *env = getenv("PRIMEKIT_SIMD");
    printf("PrimeKit kernel benchmark: library %s (header %d.%d.%d), %s mode, %d run%s per workload\n",
           pk_version_string(), PK_VERSION_MAJOR, PK_VERSION_MINOR, PK_VERSION_PATCH,
           S.quick ? "quick" : "full", S.runs, S.runs == 1 ? "" : "s");
    printf("CPU flags (__builtin_cpu_supports): avx2=%d fma=%d avx512f=%d avx512dq=%d%s\n",
           cpu_has("avx2"), cpu_has("fma"), cpu_has("avx512f"), cpu_has("avx512dq"),
#if defined(__x86_64__) || defined(__i386__)
           ""
#else
           " (not x86: no flags)"
#endif
    );
    printf("pk_options.simd = %s (%s; PRIMEKIT_SIMD=%s); the kernel runs it as %s "
           "(pk_simd_active)\n", bench_simd_name(S.simd),
           S.simd_forced ? "forced by --simd" : "from pk_options_init", env ? env : "unset",
           bench_simd_name(pk_simd_active(S.simd)));
    printf("pk_simd_active: auto>%s portable>%s avx2>%s avx512>%s; the CPU flags suggest %s\n",
           bench_simd_name(pk_simd_active(PK_SIMD_AUTO)),
           bench_simd_name(pk_simd_active(PK_SIMD_PORTABLE)),
           bench_simd_name(pk_simd_active(PK_SIMD_AVX2)),
           bench_simd_name(pk_simd_active(PK_SIMD_AVX512)), bench_simd_name(simd_expected()));
    if (pk_simd_active(PK_SIMD_AUTO) != simd_expected())
        printf("NOTE: automatic dispatch does not pick what the CPU flags suggest\n");
    report_load("at start");
    fflush(stdout);

    int cst = pk_cache_create(0, &S.cache);
    if (cst != PK_OK)
        bench_die("pk_cache_create returned %s", pk_status_name(cst));

    /* Candidates (construction time is reported, never counted). */
    char *w128_cof = NULL;
    char *w128 = make_w128(&w128_cof);
    char *w2 = NULL, *w2p = NULL;
    if (wanted("w2") || wanted("lat")) {
        double t0 = bench_now();
        w2 = make_survivor(W2_DIGITS, W2_SEED);
        printf("W2 candidate: %u digits, built in %.3f s (not timed)\n", W2_DIGITS,
               bench_now() - t0);
    }
    if (!S.quick && (wanted("w2p") || wanted("lat"))) {
        double t0 = bench_now();
        w2p = make_survivor(W2P_DIGITS, W2P_SEED);
        printf("W2' candidate: %u digits, built in %.3f s (not timed)\n", W2P_DIGITS,
               bench_now() - t0);
    }
    fflush(stdout);

    const char *w1_factors[] = {W1_N};
    bench_expect w1_ex = {PK_PRIME_YES, 1, w1_factors, "1", PK_COFACTOR_ONE};
    const char *w1b_factors[] = {W1B_P, W1B_Q};
    bench_expect w1b_ex = {PK_PRIME_NO, 2, w1b_factors, "1", PK_COFACTOR_ONE};
    const char *w128_factors[] = {W1B_Q};
    bench_expect w128_ex = {PK_PRIME_NO, 1, w128_factors, w128_cof, PK_COFACTOR_PROBABLE_PRIME};

    u64_workload("w1", "W1", W1_N, &w1_ex, 0, 0);
    u64_workload("w1b", "W1b", W1B_N, &w1b_ex, 1, 4294967279u);
    w128_workload(w128, w128_cof);
    if (wanted("w2")) {
        fprintf(stderr, "W2: %u digits, bound %u\n", W2_DIGITS, W2_BOUND);
        w2_workload(w2);
    }
    if (wanted("w2p")) {
        if (S.quick) {
            bench_row *r = report_row("W2'");
            r->path = "gmp";
            snprintf(r->simd, sizeof r->simd, "-");
            snprintf(r->note, sizeof r->note, "skipped (--quick)");
            r->runs = r->peer_runs = 0;
        } else {
            fprintf(stderr, "W2': %u digits, bound %u\n", W2P_DIGITS, W2_BOUND);
            w2p_workload(w2p);
        }
    }
    if (wanted("split"))
        split_workload();
    words_workloads(S.runs, S.quick, wanted);
    if (wanted("lat")) {
        size_t fast = S.quick ? 200 : 500, gmp = S.quick ? 200 : 300;
        double cap = S.quick ? 2.0 : 10.0, gmp_cap = S.quick ? 4.0 : 15.0;
        latency_one(LAT_U64, W1_N, NULL, &w1_ex, fast, 100e-6, 2e-3, cap, PK_PATH_U64, NULL);
        latency_one(LAT_U128, w128, NULL, &w128_ex, fast, 100e-6, 2e-3, cap, PK_PATH_U128,
                    NULL);
        bench_expect w2_ex = {PK_PRIME_UNKNOWN, 0, NULL, w2, PK_COFACTOR_UNKNOWN};
        latency_one(LAT_GMP5_COLD, w2, W2_BOUND_S, &w2_ex, gmp, 100e-6, 5e-3, gmp_cap,
                    PK_PATH_GMP, NULL);
        latency_one(LAT_GMP5_WARM, w2, W2_BOUND_S, &w2_ex, gmp, 100e-6, 5e-3, gmp_cap,
                    PK_PATH_GMP, S.cache);
        if (S.quick) {
            report_latency[LAT_GMP6_COLD].skipped = "skipped (--quick)";
            report_latency[LAT_GMP6_WARM].skipped = "skipped (--quick)";
        } else {
            bench_expect w2p_ex = {PK_PRIME_UNKNOWN, 0, NULL, w2p, PK_COFACTOR_UNKNOWN};
            latency_one(LAT_GMP6_COLD, w2p, W2_BOUND_S, &w2p_ex, 100, 100e-6, 30e-3, 20.0,
                        PK_PATH_GMP, NULL);
            latency_one(LAT_GMP6_WARM, w2p, W2_BOUND_S, &w2p_ex, 100, 100e-6, 30e-3, 20.0,
                        PK_PATH_GMP, S.cache);
        }
    }

    report_print();
    if (wanted("complete"))
        bench_complete(S.quick, 20261126);
    printf("\nAll PrimeKit answers checked. Ratios are medians of same-run pairs "
           "(PrimeKit, peer, PrimeKit, peer, ...).\n");
    report_load("at end");
    pk_cache_destroy(S.cache);
    free(w128);
    free(w128_cof);
    free(w2);
    free(w2p);
    return 0;
}
