/*
 * range/range.c — the range handle's life: create, step, interrupt, the
 * delivered segment's answers, progress and the split helper.
 */
#include <stdlib.h>
#include <string.h>

#include "range/range.h"
#include "factor/word.h"

int pk_range_create_limit(uint64_t first, uint64_t last, uint64_t limit, pk_range **out)
{
    if (!out)
        return PK_E_ARG;
    *out = NULL;
    if (first < 2)
        return PK_E_RANGE;
    if (first > last)
        return PK_E_OPTIONS;
    if (limit == 0)
        limit = pk_range_choose_limit(first, last);
    uint64_t root = pk_word_isqrt64(last);
    uint64_t floor_limit = root < PK_RANGE_MIN_LIMIT ? root : PK_RANGE_MIN_LIMIT;
    if (limit < floor_limit)
        limit = floor_limit;
    if (limit > root)
        limit = root;
    pk_range *r = calloc(1, sizeof *r);
    if (!r)
        return PK_E_NOMEM;
    atomic_init(&r->interrupt, 0);
    r->first = first;
    r->last = last;
    r->limit = limit;
    r->square = limit >= UINT32_MAX ? UINT64_MAX : (limit + 1) * (limit + 1);
    if (pk_range_tables_alloc(r) != PK_OK) {
        pk_range_destroy(r);
        return PK_E_NOMEM;
    }
    *out = r;
    return PK_OK;
}

int pk_range_create(uint64_t first, uint64_t last, pk_range **out)
{
    return pk_range_create_limit(first, last, 0, out);
}

void pk_range_destroy(pk_range *r)
{
    if (!r)
        return;
    free(r->boot);
    free(r->pbuf);
    free(r->wheel);
    free(r->head);
    free(r->chunks);
    free(r->cof);
    free(r->nf);
    free(r->fp);
    free(r->fe);
    free(r->nb);
    free(r->bp);
    free(r->be);
    free(r->small_text);
    free(r);
}

void pk_range_interrupt(pk_range *r)
{
    if (r)
        atomic_store_explicit(&r->interrupt, 1, memory_order_release);
}

static uint64_t total_of(const pk_range *r) { return r->last - r->first + 1; }

static int finish(pk_range *r)
{
    int rc = pk_range_finish(r);
    if (rc != PK_OK)
        return rc;
    return r->done == total_of(r) ? PK_DONE : PK_MORE;
}

int pk_range_step(pk_range *r, uint64_t budget)
{
    if (!r)
        return PK_E_ARG;
    r->seg_count = 0; /* the previous segment's answers are gone */
    if (r->done == total_of(r))
        return PK_DONE;
    if (budget == 0)
        return PK_MORE;
    if (r->pending) /* a segment interrupted while its cofactors were finished */
        return finish(r);
    uint64_t spent = 0;
    while (!r->ready) {
        if (pk_range_take_interrupt(r))
            return PK_INTERRUPTED;
        uint64_t units;
        int rc = pk_range_setup_chunk(r, &units);
        if (rc != PK_OK)
            return rc;
        spent += units;
        if (spent >= budget && !r->ready)
            return PK_MORE;
    }
    if (pk_range_take_interrupt(r))
        return PK_INTERRUPTED;
    int rc = pk_range_segment_reserve(r);
    if (rc != PK_OK)
        return rc;
    pk_range_sieve_segment(r);
    return finish(r);
}

int pk_range_segment(const pk_range *r, uint64_t *first, size_t *count)
{
    if (!r)
        return PK_E_ARG;
    if (first)
        *first = r->seg_count ? r->seg_first : 0;
    if (count)
        *count = r->seg_count;
    return PK_OK;
}

int pk_range_answers(const pk_range *r, size_t index, size_t count, pk_u64_answer *answers, size_t answer_size)
{
    if (!r || (count && !answers) || answer_size != sizeof(pk_u64_answer))
        return PK_E_ARG;
    if (index > r->seg_count || count > r->seg_count - index)
        return PK_E_INDEX;
    for (size_t j = 0; j < count; j++) {
        size_t i = index + j;
        pk_u64_answer *a = &answers[j];
        memset(a, 0, sizeof *a);
        a->size = sizeof *a;
        a->n = r->seg_first + i;
        unsigned k = 0;
        for (unsigned t = 0; t < r->nf[i]; t++, k++) {
            a->primes[k] = r->fp[i * PK_RANGE_MAXF + t];
            a->exponents[k] = r->fe[i * PK_RANGE_MAXF + t];
        }
        for (unsigned t = 0; t < r->nb[i]; t++, k++) {
            a->primes[k] = r->bp[i * PK_RANGE_MAXBIG + t];
            a->exponents[k] = r->be[i * PK_RANGE_MAXBIG + t];
        }
        a->factor_count = k;
    }
    return PK_OK;
}

int pk_range_progress_of(const pk_range *r, pk_range_progress *out)
{
    if (!r || !out || out->size != sizeof *out)
        return PK_E_ARG;
    out->first = r->first;
    out->last = r->last;
    out->done = r->done;
    out->total = total_of(r);
    out->limit = r->limit;
    return PK_OK;
}

int pk_range_split(uint64_t first, uint64_t last, uint64_t parts, uint64_t index, uint64_t *sub_first,
                   uint64_t *sub_last)
{
    if (!sub_first || !sub_last || parts == 0)
        return PK_E_ARG;
    if (first < 2)
        return PK_E_RANGE;
    if (first > last)
        return PK_E_OPTIONS;
    uint64_t count = last - first + 1; /* first >= 2: no overflow */
    if (parts > count)
        return PK_E_OPTIONS;
    if (index >= parts)
        return PK_E_INDEX;
    uint64_t q = count / parts, rem = count % parts;
    uint64_t start = index * q + (index < rem ? index : rem);
    *sub_first = first + start;
    *sub_last = *sub_first + q - (index < rem ? 0 : 1);
    return PK_OK;
}
