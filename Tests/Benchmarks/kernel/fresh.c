/*
 * fresh.c — running one job in a brand-new process, so that nothing an
 * earlier job left behind (a filled cache, warm allocator, page tables) can
 * help it: pk-bench re-executes itself with --child-fresh, writes the
 * candidate to the child's stdin and reads one line of figures back.
 */
#include "bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Child side: read the candidate on stdin, run it once in this brand-new
 * process, print "seconds cpu-seconds divisors path". With a cache file, the
 * time includes loading it (pk_cache_load) into the new cache. */
int bench_child_fresh(int simd, const char *bound, const char *cache_file)
{
    size_t cap = 1 << 20, len = 0;
    char *buf = bench_xmalloc(cap);
    for (;;) {
        if (len + 1 == cap) {
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL)
                bench_die("child: out of memory");
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, stdin);
        if (got == 0)
            break;
        len += got;
    }
    buf[len] = '\0';

    /* A new, empty cache: this is the first job of a process that keeps one
     * (as an engine does). Creating it is not part of the job's time. */
    pk_cache *cache = NULL;
    int st = pk_cache_create(0, &cache);
    if (st != PK_OK)
        bench_die("child: pk_cache_create returned %s", pk_status_name(st));
    pk_options opt;
    bench_options(&opt, simd, NULL, bound);
    opt.cache = cache;
    bench_expect ex = {PK_PRIME_UNKNOWN, 0, NULL, buf, PK_COFACTOR_UNKNOWN};
    double load = 0, load_cpu = 0;
    if (cache_file) {
        double c0 = bench_thread_cpu(), t0 = bench_now();
        st = pk_cache_load(cache, cache_file);
        load = bench_now() - t0;
        load_cpu = bench_thread_cpu() - c0;
        if (st != PK_OK)
            bench_die("child: pk_cache_load(%s) returned %s", cache_file, pk_status_name(st));
    }
    bench_pk_run r = bench_pk_timed("fresh-process run", buf, &opt, &ex);
    printf("%.9f %.9f %llu %d\n", r.seconds + load, r.cpu + load_cpu,
           (unsigned long long)r.divisors_tested, r.path);
    pk_cache_destroy(cache);
    free(buf);
    return 0;
}

/* Parent side: run the candidate in a new process (no cache of any earlier
 * job can exist there, except what it loads from cache_file when that is not
 * NULL). Aborts when the child fails or answers wrongly. */
bench_pk_run bench_run_fresh(const char *self, int simd, const char *bound,
                            const char *workload, const char *candidate, const char *cache_file)
{
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0)
        bench_die("pipe: %s", strerror(errno));
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork: %s", strerror(errno));
    if (pid == 0) {
        char simd_s[16];
        snprintf(simd_s, sizeof simd_s, "%d", simd);
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[0]); close(in[1]); close(out[0]); close(out[1]);
        execl(self, self, "--child-fresh", simd_s, bound, cache_file, (char *)NULL);
        fprintf(stderr, "pk-bench: exec %s: %s\n", self, strerror(errno));
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    size_t len = strlen(candidate), off = 0;
    while (off < len) {
        ssize_t w = write(in[1], candidate + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break; /* the child died; waitpid reports it */
        off += (size_t)w;
    }
    close(in[1]);
    char line[256];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(out[0], line + got, sizeof line - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
        if (got == sizeof line - 1)
            break;
    }
    line[got] = '\0';
    close(out[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_die("%s: the fresh-process run failed (see its message above)", workload);
    bench_pk_run run;
    unsigned long long div = 0;
    if (sscanf(line, "%lf %lf %llu %d", &run.seconds, &run.cpu, &div, &run.path) != 4)
        bench_die("%s: unreadable reply from the fresh process: %s", workload, line);
    run.divisors_tested = div;
    return run;
}

