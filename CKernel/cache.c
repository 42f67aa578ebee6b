/*
 * cache.c — a lock-free, write-once cache of segment prime products.
 *
 * Slots are the nodes of a binary tree over aligned sieve segments: node
 * (level, i) holds the product of the primes of segments [i * 2^level,
 * (i + 1) * 2^level). A job that computes a node offers it; the first offer
 * wins (compare-and-swap from NULL) and is never changed again, so readers
 * need no lock.
 */
#include <stdlib.h>

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
