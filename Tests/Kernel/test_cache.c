/*
 * test_cache.c — a pk_cache shared by jobs (also on different threads at the
 * same time) never changes an answer; its file form (pk_cache_save,
 * pk_cache_load) round-trips, and a damaged file is refused and adds nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "pkt.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCAND 4

typedef struct cache_run {
    char **cands;
    const char *bound;
    pk_cache *cache;
    pkt_answer got[NCAND];
    int status[NCAND];
    int first, step; /* which candidates this run handles */
} cache_run;

static void *run_jobs(void *p)
{
    cache_run *r = p;
    for (int i = r->first; i < NCAND; i += r->step) {
        pk_options o;
        pk_options_init(&o);
        o.bound = r->bound;
        o.cache = r->cache;
        pk_job *job = NULL;
        pkt_answer_init(&r->got[i]);
        r->status[i] = pk_job_create(r->cands[i], &o, &job);
        if (r->status[i] != PK_OK) continue;
        /* Slices, as a worker would run them. */
        int st;
        do st = pk_job_step(job, 1u << 20);
        while (st == PK_MORE);
        r->status[i] = st == PK_DONE ? pkt_answer_read(job, &r->got[i]) : st;
        pk_job_destroy(job);
    }
    return NULL;
}

static void compare_run(cache_run *r, const pkt_answer *want, const char *how)
{
    for (int i = 0; i < NCAND; i++) {
        PKT_CHECK_STATUS(r->status[i], PK_OK, how);
        if (r->status[i] != PK_OK) continue;
        char why[300];
        PKT_CHECK(pkt_answer_equal(&r->got[i], &want[i], why, sizeof why), "%s: candidate %d (%zu digits): %s",
                  how, i, strlen(r->cands[i]), why);
    }
}

static void clear_run(cache_run *r)
{
    for (int i = 0; i < NCAND; i++) pkt_answer_free(&r->got[i]);
}

/* NCAND candidates of first, first + step, ... digits, each random digits
   times `planted` primes below `bound`, with the
   oracle's answers for trial division to that bound. */
static void plant_candidates(pkt_rng *rng, unsigned first, unsigned step, int planted, unsigned long bound,
                             char **cands, pkt_answer *want)
{
    mpz_t n, p;
    mpz_init(n);
    mpz_init(p);
    for (int i = 0; i < NCAND; i++) {
        unsigned digits = first + step * (unsigned)i;
        pkt_rand_bits(rng, n, (unsigned)(digits * 3.3219280948873623));
        for (int k = 0; k < planted; k++) {
            mpz_set_ui(p, pkt_rand_range(rng, 2, bound));
            mpz_nextprime(p, p);
            mpz_mul(n, n, p);
        }
        cands[i] = mpz_get_str(NULL, 10, n);
        pkt_oracle(n, bound, 0, NULL, 0, &want[i], NULL);
    }
    mpz_clear(n);
    mpz_clear(p);
}

void test_cache_shared_by_jobs_and_threads_changes_no_answer(void)
{
    pkt_say("checks: pk_cache_create/destroy arguments; %d GMP-path candidates (2100..3200 digits, bound 10^6) "
            "give the oracle's answer without a cache, with a shared cache (cold, then warm), with a cache too "
            "small to keep anything, and from two threads stepping jobs on one cache at the same time",
            NCAND);
    pk_cache *cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, NULL), PK_E_ARG, "pk_cache_create(out = NULL)");
    pk_cache_destroy(NULL);

    pkt_rng rng;
    pkt_rng_for(&rng, "cache");
    char *cands[NCAND];
    pkt_answer want[NCAND];
    const char *bound = "1000000";
    plant_candidates(&rng, 2100, 350, 6, 1000000, cands, want);  /* planted factors spread over the range */

    cache_run r = {.cands = cands, .bound = bound, .cache = NULL, .first = 0, .step = 1};
    run_jobs(&r);
    compare_run(&r, want, "no cache");
    clear_run(&r);

    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create(0)");
    if (cache) {
        r.cache = cache;
        run_jobs(&r);
        compare_run(&r, want, "cold shared cache");
        clear_run(&r);
        run_jobs(&r);
        compare_run(&r, want, "warm shared cache");
        clear_run(&r);
        pk_cache_destroy(cache);
    }

    cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(1, &cache), PK_OK, "pk_cache_create(1 byte)");
    if (cache) {
        r.cache = cache;
        run_jobs(&r);
        compare_run(&r, want, "cache of 1 byte");
        clear_run(&r);
        pk_cache_destroy(cache);
    }

    /* Two threads, one cache, jobs running at the same time. */
    cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create for threads");
    if (cache) {
        cache_run a = {.cands = cands, .bound = bound, .cache = cache, .first = 0, .step = 2};
        cache_run b = {.cands = cands, .bound = bound, .cache = cache, .first = 1, .step = 2};
        cache_run c = {.cands = cands, .bound = bound, .cache = cache, .first = 0, .step = 1};
        pthread_t ta, tb;
        pthread_create(&ta, NULL, run_jobs, &a);
        pthread_create(&tb, NULL, run_jobs, &b);
        run_jobs(&c); /* the main thread runs all four meanwhile */
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        for (int i = 0; i < NCAND; i++) {
            cache_run *own = (i % 2 == 0) ? &a : &b;
            PKT_CHECK_STATUS(own->status[i], PK_OK, "threaded job");
            char why[300];
            if (own->status[i] == PK_OK)
                PKT_CHECK(pkt_answer_equal(&own->got[i], &want[i], why, sizeof why), "thread, candidate %d: %s", i,
                          why);
        }
        compare_run(&c, want, "main thread alongside two others");
        clear_run(&a);
        clear_run(&b);
        clear_run(&c);
        pk_cache_destroy(cache);
    }
    for (int i = 0; i < NCAND; i++) {
        free(cands[i]);
        pkt_answer_free(&want[i]);
    }
}

/* ------------------------------------------------------------ cache files */

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) b = realloc(b, cap *= 2);
    }
    fclose(f);
    *len = n;
    return b;
}

static int write_file(const char *path, const unsigned char *b, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(b, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

/* The file format's checksum, written here again as the oracle: FNV-1a 64
   over little-endian 64-bit words. */
static uint64_t fnv1a_words(const unsigned char *b, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i + 8 <= n; i += 8) {
        uint64_t w = 0;
        for (int k = 7; k >= 0; k--) w = w << 8 | b[i + (size_t)k];
        h = (h ^ w) * UINT64_C(0x100000001b3);
    }
    return h;
}

static void reseal(unsigned char *b, size_t len)
{
    uint64_t h = fnv1a_words(b, len - 8);
    for (int i = 0; i < 8; i++) b[len - 8 + i] = (unsigned char)(h >> (8 * i));
}

/* Loads a file into a new cache; returns the status, and through *entries
   whether anything entered (a save of that cache is longer than an empty one). */
static int load_fresh(const char *path, const char *probe, size_t empty_len, int *entered)
{
    pk_cache *c = NULL;
    if (pk_cache_create(0, &c) != PK_OK) return PK_E_NOMEM;
    int st = pk_cache_load(c, path);
    *entered = -1;
    if (probe && pk_cache_save(c, probe) == PK_OK) {
        size_t n = 0;
        unsigned char *b = read_file(probe, &n);
        *entered = b && n != empty_len;
        free(b);
    }
    pk_cache_destroy(c);
    return st;
}

static int dir_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

void test_cache_file_round_trips_and_damaged_files_are_refused(void)
{
    pkt_say("checks: a cache saved after jobs (bound 2*10^6) and loaded by another cache gives the oracle's answers and "
            "saves to the same bytes; no temporary file is left; missing files and directories are PK_E_IO; a file "
            "with any byte of its header and entry heads changed, a random sample of its other bytes changed, cut "
            "short at sampled lengths, grown by a byte, or of another version or layout under a valid checksum is "
            "PK_E_CACHE_FILE and adds nothing");
    const char *base = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/pk-cache-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
        PKT_CHECK(0, "mkdtemp %s failed", dir);
        return;
    }
    char path[600], copy[600], probe[600], empty[600], nodir[600];
    snprintf(path, sizeof path, "%s/primes.pkcache", dir);
    snprintf(copy, sizeof copy, "%s/copy.pkcache", dir);
    snprintf(probe, sizeof probe, "%s/probe.pkcache", dir);
    snprintf(empty, sizeof empty, "%s/empty.pkcache", dir);
    snprintf(nodir, sizeof nodir, "%s/no/such/dir.pkcache", dir);

    pk_cache *cache = NULL;
    PKT_CHECK_STATUS(pk_cache_save(NULL, path), PK_E_ARG, "pk_cache_save(NULL)");
    PKT_CHECK_STATUS(pk_cache_load(NULL, path), PK_E_ARG, "pk_cache_load(NULL)");
    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create");
    if (!cache) return;
    PKT_CHECK_STATUS(pk_cache_save(cache, NULL), PK_E_ARG, "pk_cache_save(path NULL)");
    PKT_CHECK_STATUS(pk_cache_load(cache, ""), PK_E_ARG, "pk_cache_load(path \"\")");
    PKT_CHECK_STATUS(pk_cache_load(cache, path), PK_E_IO, "pk_cache_load of a missing file");
    PKT_CHECK_STATUS(pk_cache_save(cache, empty), PK_OK, "pk_cache_save of an empty cache");
    PKT_CHECK_STATUS(pk_cache_save(cache, nodir), PK_E_IO, "pk_cache_save into a missing directory");
    size_t empty_len = 0;
    free(read_file(empty, &empty_len));
    PKT_CHECK(empty_len == 48, "an empty cache's file has %zu bytes, want 48 (header and checksum)", empty_len);

    /* Jobs fill the cache; its file goes to a second cache whose jobs must
       give the same answers. */
    pkt_rng rng;
    pkt_rng_for(&rng, "cache-file");
    char *cands[NCAND];
    pkt_answer want[NCAND];
    const char *bound = "2000000";
    plant_candidates(&rng, 4000, 700, 5, 2000000, cands, want);  /* windows: 208 limbs and more */
    cache_run r = {.cands = cands, .bound = bound, .cache = cache, .first = 0, .step = 1};
    run_jobs(&r);
    compare_run(&r, want, "jobs filling the cache");
    clear_run(&r);
    PKT_CHECK_STATUS(pk_cache_save(cache, path), PK_OK, "pk_cache_save after jobs");
    PKT_CHECK(dir_entries(dir) == 2, "the directory holds %d entries after two saves, want 2", dir_entries(dir));
    run_jobs(&r); /* the cache after saving (it paired its nodes) */
    compare_run(&r, want, "jobs on the saving cache");
    clear_run(&r);
    pk_cache_destroy(cache);

    size_t len = 0;
    unsigned char *file = read_file(path, &len);
    PKT_CHECK(file && len > 100000, "the saved file has %zu bytes, want the products of 7 segments", len);
    cache = NULL;
    PKT_CHECK_STATUS(pk_cache_create(0, &cache), PK_OK, "pk_cache_create for loading");
    if (cache && file) {
        PKT_CHECK_STATUS(pk_cache_load(cache, path), PK_OK, "pk_cache_load");
        PKT_CHECK_STATUS(pk_cache_save(cache, copy), PK_OK, "pk_cache_save of the loaded cache");
        size_t clen = 0;
        unsigned char *cb = read_file(copy, &clen);
        PKT_CHECK(cb && clen == len && memcmp(cb, file, len) == 0,
                  "the loaded cache saves to other bytes (%zu against %zu)", clen, len);
        free(cb);
        r.cache = cache;
        run_jobs(&r);
        compare_run(&r, want, "jobs on the loaded cache");
        clear_run(&r);
        /* Loading again over the same products changes nothing. */
        PKT_CHECK_STATUS(pk_cache_load(cache, path), PK_OK, "pk_cache_load twice");
        run_jobs(&r);
        compare_run(&r, want, "jobs after loading twice");
        clear_run(&r);
    }
    pk_cache_destroy(cache);
    for (int i = 0; i < NCAND; i++) {
        free(cands[i]);
        pkt_answer_free(&want[i]);
    }
    if (!file) return;

    int entered = 0;
    PKT_CHECK(load_fresh(path, probe, empty_len, &entered) == PK_OK && entered == 1,
              "the intact file loads and adds products (entered %d)", entered);

    /* Positions to damage: the header, each entry's head and the first and
       last bytes of its product, the checksum, and a random sample. */
    unsigned char *bad = malloc(len + 1);
    size_t *pos = malloc((len + 4000) * sizeof *pos), npos = 0;
    for (size_t i = 0; i < 40; i++) pos[npos++] = i;
    uint64_t count = file[20] | (uint64_t)file[21] << 8;
    for (size_t at = 40, k = 0; k < count && at + 32 <= len - 8; k++) {
        uint64_t bytes = 0;
        for (int i = 7; i >= 0; i--) bytes = bytes << 8 | file[at + 24 + (size_t)i];
        bytes *= 8; /* the field counts words */
        for (size_t i = 0; i < 32 + 64 && at + i < len - 8; i++) pos[npos++] = at + i;
        for (size_t i = 0; i < 64 && i < bytes; i++) pos[npos++] = at + 32 + bytes - 1 - i;
        at += 32 + bytes;
    }
    for (size_t i = 0; i < 8; i++) pos[npos++] = len - 8 + i;
    for (int i = 0; i < 800; i++) pos[npos++] = (size_t)pkt_rand_below(&rng, len);
    int refused = 0;
    for (size_t k = 0; k < npos; k++) {
        memcpy(bad, file, len);
        bad[pos[k]] ^= (unsigned char)pkt_rand_range(&rng, 1, 255);
        write_file(copy, bad, len);
        int st = load_fresh(copy, k % 64 == 0 ? probe : NULL, empty_len, &entered);
        PKT_CHECK(st == PK_E_CACHE_FILE, "byte %zu of %zu changed: pk_cache_load returned %s", pos[k], len,
                  pk_status_name(st));
        PKT_CHECK(entered != 1, "byte %zu changed: a refused file added products", pos[k]);
        refused += st == PK_E_CACHE_FILE;
    }
    /* Cut short, grown. */
    size_t cuts[] = {0, 1, 8, 39, 40, 47, 48, 71, 72, len / 2, len - 9, len - 8, len - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0] + 200; k++) {
        size_t cut = k < sizeof cuts / sizeof cuts[0] ? cuts[k] : (size_t)pkt_rand_below(&rng, len);
        write_file(copy, file, cut);
        int st = load_fresh(copy, NULL, empty_len, &entered);
        PKT_CHECK(st == PK_E_CACHE_FILE, "file cut to %zu of %zu bytes: %s", cut, len, pk_status_name(st));
    }
    memcpy(bad, file, len);
    bad[len] = 0;
    write_file(copy, bad, len + 1);
    PKT_CHECK_STATUS(load_fresh(copy, probe, empty_len, &entered), PK_E_CACHE_FILE, "file grown by one byte");
    PKT_CHECK(entered == 0, "a grown file added products");

    /* Another version, segment layout or level count, or a product moved to
       another node, each under a recomputed checksum. */
    struct { size_t at; unsigned char to; const char *what; } edits[] = {
        {8, 2, "format version 2"}, {8, 0, "format version 0"}, {12, 17, "segments of 2^17"},
        {12, 20, "segments of 2^20"}, {16, 11, "11 levels"}, {16, 13, "13 levels"},
        {48, (unsigned char)(file[48] + 1), "the first product moved to the next index"},
        {40, (unsigned char)(file[40] + 1), "the first product moved a level up"},
        {44, 1, "a nonzero padding field"},
        {57, 0, "the first product's prime count below 256"}, {63, 0x80, "a prime count above 2^63"},
        {24, (unsigned char)(file[24] ^ 1), "the covered range"},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        memcpy(bad, file, len);
        bad[edits[k].at] = edits[k].to;
        reseal(bad, len);
        write_file(copy, bad, len);
        int st = load_fresh(copy, probe, empty_len, &entered);
        PKT_CHECK(st == PK_E_CACHE_FILE && entered == 0, "%s under a valid checksum: %s (entered %d)",
                  edits[k].what, pk_status_name(st), entered);
    }
    pkt_say("  %zu-byte file, %d changed copies refused", len, refused);
    free(bad);
    free(pos);
    free(file);
    unlink(path);
    unlink(copy);
    unlink(probe);
    unlink(empty);
    rmdir(dir);
}
