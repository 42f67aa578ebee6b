/*
 * cache.c — a lock-free, write-once cache of segment prime products.
 *
 * Slots are the nodes of a binary tree over aligned sieve segments: node
 * (level, i) holds the product of the primes of segments [i * 2^level,
 * (i + 1) * 2^level). A job that computes a node offers it; the first offer
 * wins (compare-and-swap from NULL) and is never changed again, so readers
 * need no lock.
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pk_internal.h"

#define PK_CACHE_DEFAULT_BYTES ((size_t)64 << 20)
#define PK_CACHE_MAX_SLOTS ((size_t)1 << 16) /* segments up to 2^34 */

int pk_cache_create(size_t max_bytes, pk_cache **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    pk_cache *c = calloc(1, sizeof *c);
    if (!c)
        return PK_E_NOMEM;
    c->slot_count = PK_CACHE_MAX_SLOTS;
    c->slots = calloc(2 * c->slot_count, sizeof *c->slots);
    if (!c->slots) {
        free(c);
        return PK_E_NOMEM;
    }
    for (size_t i = 0; i < 2 * c->slot_count; i++)
        atomic_init(&c->slots[i], NULL);
    atomic_init(&c->bytes, 0);
    c->max_bytes = max_bytes ? max_bytes : PK_CACHE_DEFAULT_BYTES;
    *out = c;
    return PK_OK;
}

void pk_cache_destroy(pk_cache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < 2 * c->slot_count; i++) {
        pk_cache_entry *e = atomic_load(&c->slots[i]);
        if (e) {
            mpz_clear(e->product);
            free(e);
        }
    }
    free(c->slots);
    free(c);
}

/* Level l occupies slots [2N - 2N/2^l, 2N - N/2^l) of the 2N slots. */
static size_t slot_of(const pk_cache *c, unsigned level, uint64_t i)
{
    if (level >= PK_CACHE_LEVELS || i >= (c->slot_count >> level))
        return SIZE_MAX;
    return 2 * c->slot_count - 2 * (c->slot_count >> level) + (size_t)i;
}

const pk_cache_entry *pk_cache_get(pk_cache *c, unsigned level, uint64_t i)
{
    size_t k = c ? slot_of(c, level, i) : SIZE_MAX;
    if (k == SIZE_MAX)
        return NULL;
    return atomic_load_explicit(&c->slots[k], memory_order_acquire);
}

void pk_cache_put(pk_cache *c, unsigned level, uint64_t i, const mpz_t product, long count)
{
    size_t k = c ? slot_of(c, level, i) : SIZE_MAX;
    if (k == SIZE_MAX)
        return;
    size_t size = mpz_size(product) * sizeof(mp_limb_t) + sizeof(pk_cache_entry);
    size_t used = atomic_fetch_add(&c->bytes, size);
    if (used + size > c->max_bytes) {
        atomic_fetch_sub(&c->bytes, size);
        return;
    }
    pk_cache_entry *e = malloc(sizeof *e);
    if (!e) {
        atomic_fetch_sub(&c->bytes, size);
        return;
    }
    mpz_init_set(e->product, product);
    e->count = count;
    pk_cache_entry *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&c->slots[k], &expected, e,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        mpz_clear(e->product);
        free(e);
        atomic_fetch_sub(&c->bytes, size);
    }
}

/* ------------------------------------------------------------ files */

/*
 * The file form of a cache (pk_cache_save, pk_cache_load). Integers are
 * little-endian; products are little-endian strings of 64-bit words, so the
 * file is a whole number of words.
 *
 *   header   "PKCACHE\0"        8 bytes
 *            format version     u32 (PK_CACHE_FILE_VERSION)
 *            log2 segment span  u32 (18: PK_SIEVE_SPAN)
 *            cache levels       u32 (PK_CACHE_LEVELS)
 *            entry count        u32
 *            covered            u64 (end of the last segment any entry covers)
 *            byte length        u64 (of the whole file, checksum included)
 *   entries  level u32, zero u32, index u64, prime count u64, words u64,
 *            the words (the last one not zero)
 *   checksum u64: FNV-1a 64 over the words before it (each word xored in
 *            whole, then the multiplication), so any change of one word,
 *            and any change of one byte, changes it
 *
 * Only maximal nodes are written (a node whose parent is in the cache is
 * covered by it). A file is refused as a whole (PK_E_CACHE_FILE) unless its
 * length, checksum, version, layout and every entry's position and size
 * agree; nothing of a refused file enters the cache.
 */

#define PK_CACHE_FILE_MAGIC "PKCACHE"
#define PK_CACHE_FILE_VERSION 1u
#define PK_CACHE_SPAN_LOG2 18u
#define PK_CACHE_HEADER 40u
#define PK_CACHE_ENTRY_HEAD 32u
/* Saving pairs sibling nodes up to this many limbs per operand. */
#define PK_CACHE_MERGE_MAX_LIMBS ((size_t)1 << 20)

static uint64_t get_le(const unsigned char *p, unsigned n);

/* The file's checksum: FNV-1a 64 taking a little-endian word at a time (a
   byte at a time costs 3 ms for the primes below 10^7, a word at a time 0.4). */
static uint64_t file_checksum(const unsigned char *p, size_t words)
{
    uint64_t h = PK_FNV_START;
    for (size_t i = 0; i < words; i++)
        h = pk_fnv_fold(h, get_le(p + 8 * i, 8));
    return h;
}

static void put_le(unsigned char *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = n; i-- > 0;)
        v = v << 8 | p[i];
    return v;
}

/* Sibling nodes both present and their parent absent are multiplied into the
   parent (bottom up, so parents pair again), so a later job folds fewer, larger
   nodes. */
static int cache_merge(pk_cache *c)
{
    mpz_t t;
    mpz_init(t);
    for (unsigned l = 0; l + 1 < PK_CACHE_LEVELS; l++) {
        uint64_t n = c->slot_count >> l;
        for (uint64_t i = 0; i + 1 < n; i += 2) {
            const pk_cache_entry *a = pk_cache_get(c, l, i), *b = pk_cache_get(c, l, i + 1);
            if (!a || !b || pk_cache_get(c, l + 1, i >> 1))
                continue;
            if (mpz_size(a->product) > PK_CACHE_MERGE_MAX_LIMBS || mpz_size(b->product) > PK_CACHE_MERGE_MAX_LIMBS)
                continue;
            mpz_mul(t, a->product, b->product);
            pk_cache_put(c, l + 1, i >> 1, t, a->count + b->count);
        }
    }
    mpz_clear(t);
    return PK_OK;
}

/* Whether node (l, i) is written: present, and its parent absent. */
static const pk_cache_entry *maximal(pk_cache *c, unsigned l, uint64_t i)
{
    const pk_cache_entry *e = pk_cache_get(c, l, i);
    if (!e || (l + 1 < PK_CACHE_LEVELS && pk_cache_get(c, l + 1, i >> 1)))
        return NULL;
    return e;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int pk_cache_save(pk_cache *c, const char *path)
{
    if (!c || !path || !*path)
        return PK_E_ARG;
    cache_merge(c);
    /* Sizes first, then one buffer (products are exported into it). */
    size_t total = PK_CACHE_HEADER + 8, count = 0;
    uint64_t covered = 0;
    for (unsigned l = 0; l < PK_CACHE_LEVELS; l++)
        for (uint64_t i = 0; i < (c->slot_count >> l); i++) {
            const pk_cache_entry *e = maximal(c, l, i);
            if (!e)
                continue;
            total += PK_CACHE_ENTRY_HEAD + 8 * mpz_size(e->product);
            count++;
            uint64_t end = ((i + 1) << l) * PK_SIEVE_SPAN;
            if (end > covered)
                covered = end;
        }
    unsigned char *buf = malloc(total);
    if (!buf)
        return PK_E_NOMEM;
    memcpy(buf, PK_CACHE_FILE_MAGIC, 8);
    put_le(buf + 8, PK_CACHE_FILE_VERSION, 4);
    put_le(buf + 12, PK_CACHE_SPAN_LOG2, 4);
    put_le(buf + 16, PK_CACHE_LEVELS, 4);
    put_le(buf + 20, count, 4);
    put_le(buf + 24, covered, 8);
    put_le(buf + 32, total, 8);
    size_t at = PK_CACHE_HEADER;
    for (unsigned l = 0; l < PK_CACHE_LEVELS; l++)
        for (uint64_t i = 0; i < (c->slot_count >> l); i++) {
            const pk_cache_entry *e = maximal(c, l, i);
            if (!e)
                continue;
            size_t words = mpz_size(e->product), got = 0;
            put_le(buf + at, l, 4);
            put_le(buf + at + 4, 0, 4);
            put_le(buf + at + 8, i, 8);
            put_le(buf + at + 16, (uint64_t)e->count, 8);
            put_le(buf + at + 24, words, 8);
            mpz_export(buf + at + PK_CACHE_ENTRY_HEAD, &got, -1, 8, -1, 0, e->product);
            at += PK_CACHE_ENTRY_HEAD + 8 * words;
        }
    put_le(buf + at, file_checksum(buf, at / 8), 8);

    /* A temporary file next to the target, flushed to disk, then renamed over
       it: a reader sees the old file or the new one, never a part. */
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 8);
    if (!tmp) {
        free(buf);
        return PK_E_NOMEM;
    }
    memcpy(tmp, path, pl);
    memcpy(tmp + pl, ".XXXXXX", 8);
    int rc = PK_E_IO;
    int fd = mkstemp(tmp);
    if (fd >= 0) {
        int ok = write_all(fd, buf, total) == 0 && fsync(fd) == 0;
        ok = close(fd) == 0 && ok;
        if (ok && rename(tmp, path) == 0) {
            rc = PK_OK;
            /* The rename itself reaches the disk with the directory. */
            char *slash = strrchr(tmp, '/');
            if (slash) {
                *slash = '\0';
                int dfd = open(slash == tmp ? "/" : tmp, O_RDONLY);
                if (dfd >= 0) {
                    fsync(dfd);
                    close(dfd);
                }
            }
        } else {
            unlink(tmp);
        }
    }
    free(tmp);
    free(buf);
    return rc;
}

/* Checks one entry of a file against the layout; 1 when it is plausible. */
static int entry_ok(const pk_cache *c, unsigned l, uint64_t i, uint64_t count, uint64_t words,
                    const unsigned char *p)
{
    if (l >= PK_CACHE_LEVELS || i >= (c->slot_count >> l) || words == 0 || get_le(p + 8 * (words - 1), 8) == 0)
        return 0;
    /* Every prime of the node is below its end, so the product has at most
       count·log2(end) bits, and at least one bit per prime. */
    uint64_t end = ((i + 1) << l) * PK_SIEVE_SPAN, lg = 1;
    while (lg < 64 && (UINT64_C(1) << lg) < end)
        lg++;
    uint64_t bits = 64 * words - 64 + 64 - (uint64_t)__builtin_clzll(get_le(p + 8 * (words - 1), 8));
    return count > 0 && count <= ((uint64_t)1 << l) * PK_SIEVE_SPAN / 2 + 1 && bits <= count * lg && bits >= count;
}

int pk_cache_load(pk_cache *c, const char *path)
{
    if (!c || !path || !*path)
        return PK_E_ARG;
    FILE *f = fopen(path, "rb");
    if (!f)
        return PK_E_IO;
    unsigned char head[PK_CACHE_HEADER];
    if (fread(head, 1, sizeof head, f) != sizeof head) {
        int err = ferror(f);
        fclose(f);
        return err ? PK_E_IO : PK_E_CACHE_FILE;
    }
    uint64_t total = get_le(head + 32, 8);
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (size < 0 || fseek(f, (long)sizeof head, SEEK_SET) != 0) {
        fclose(f);
        return PK_E_IO;
    }
    /* The length it states must be its length: cut short or grown files stop here. */
    if (memcmp(head, PK_CACHE_FILE_MAGIC, 8) != 0 || total < PK_CACHE_HEADER + 8 || total != (uint64_t)size) {
        fclose(f);
        return PK_E_CACHE_FILE;
    }
    unsigned char *buf = malloc((size_t)total + 1);
    if (!buf) {
        fclose(f);
        return PK_E_NOMEM;
    }
    memcpy(buf, head, sizeof head);
    size_t got = fread(buf + sizeof head, 1, (size_t)total + 1 - sizeof head, f);
    int err = ferror(f);
    fclose(f);
    int rc = PK_OK;
    if (err)
        rc = PK_E_IO;
    else if (got != total - sizeof head /* truncated, or longer than it says */ || total % 8 != 0
             || get_le(buf + total - 8, 8) != file_checksum(buf, (size_t)total / 8 - 1)
             || get_le(buf + 8, 4) != PK_CACHE_FILE_VERSION || get_le(buf + 12, 4) != PK_CACHE_SPAN_LOG2
             || get_le(buf + 16, 4) != PK_CACHE_LEVELS)
        rc = PK_E_CACHE_FILE;
    /* Every entry is checked before any enters the cache. */
    uint64_t count = get_le(buf + 20, 4), covered = 0;
    size_t at = PK_CACHE_HEADER, end = (size_t)total - 8;
    for (uint64_t k = 0; rc == PK_OK && k < count; k++) {
        if (end - at < PK_CACHE_ENTRY_HEAD) {
            rc = PK_E_CACHE_FILE;
            break;
        }
        unsigned l = (unsigned)get_le(buf + at, 4);
        uint64_t i = get_le(buf + at + 8, 8), n = get_le(buf + at + 16, 8), words = get_le(buf + at + 24, 8);
        if (get_le(buf + at, 4) >= PK_CACHE_LEVELS || get_le(buf + at + 4, 4) != 0
            || words > (end - at - PK_CACHE_ENTRY_HEAD) / 8 || !entry_ok(c, l, i, n, words, buf + at + PK_CACHE_ENTRY_HEAD)) {
            rc = PK_E_CACHE_FILE;
            break;
        }
        if (((i + 1) << l) * PK_SIEVE_SPAN > covered)
            covered = ((i + 1) << l) * PK_SIEVE_SPAN;
        at += PK_CACHE_ENTRY_HEAD + 8 * (size_t)words;
    }
    if (rc == PK_OK && (at != end || covered != get_le(buf + 24, 8)))
        rc = PK_E_CACHE_FILE;
    if (rc == PK_OK) {
        mpz_t t;
        at = PK_CACHE_HEADER;
        for (uint64_t k = 0; k < count; k++) {
            unsigned l = (unsigned)get_le(buf + at, 4);
            uint64_t i = get_le(buf + at + 8, 8), n = get_le(buf + at + 16, 8), words = get_le(buf + at + 24, 8);
            const unsigned char *p = buf + at + PK_CACHE_ENTRY_HEAD;
#if GMP_LIMB_BITS == 64 && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* The words are limbs already (the buffer and every offset are
               8-aligned): a read-only view, which the cache copies once. */
            mpz_roinit_n(t, (const mp_limb_t *)(const void *)p, (mp_size_t)words);
            pk_cache_put(c, l, i, t, (long)n);
#else
            mpz_init(t);
            mpz_import(t, (size_t)words, -1, 8, -1, 0, p);
            pk_cache_put(c, l, i, t, (long)n);
            mpz_clear(t);
#endif
            at += PK_CACHE_ENTRY_HEAD + 8 * (size_t)words;
        }
    }
    free(buf);
    return rc;
}
