/*
 * td_word.c — trial division while the cofactor fits in 128 bits.
 *
 * Divisors: 2, 3, 5, 7, then the candidates of the 210-wheel (48 of every
 * 210 integers). Below PK_FP_MIN_DIVISOR, and for partial wheel turns at the
 * ends of a range, each candidate is tested with an exact remainder. Whole
 * turns above it go to the dispatched scan (scan.c), which never divides.
 * Work is done in blocks of at most PK_BLOCK candidates; the interrupt flag
 * and the budget are checked between blocks, and every block boundary is a
 * resume point (job->next).
 */
#include "pk_internal.h"

#define PK_BLOCK 65536u /* candidates per block: well under 1 ms on any path */

/* First turn whose candidates are all >= PK_FP_MIN_DIVISOR. */
#define PK_FP_FIRST_TURN ((PK_FP_MIN_DIVISOR + PK_WHEEL - 1) / PK_WHEEL)

/* Smallest wheel candidate >= d, for d >= 8. */
static uint64_t wheel_ceil(uint64_t d, unsigned *slot)
{
    uint64_t t = d / PK_WHEEL;
    unsigned r = (unsigned)(d % PK_WHEEL);
    for (unsigned s = 0; s < PK_WHEEL_SLOTS; s++) {
        if (pk_wheel_residues[s] >= r) {
            *slot = s;
            return t * PK_WHEEL + pk_wheel_residues[s];
        }
    }
    *slot = 0;
    return (t + 1) * PK_WHEEL + 1;
}

typedef struct word_n {
    pk_u128 n;
    uint64_t n64;
    int wide;           /* n >= 2^64 */
} word_n;

static inline int exact_divides(const word_n *w, uint64_t d)
{
    return w->wide ? (w->n % d) == 0 : (w->n64 % d) == 0;
}

/*
 * Test wheel candidates from *pos up to hi (inclusive), at most max_count of
 * them, with exact remainders. Returns the first divisor found (0 if none);
 * *pos becomes the first integer not yet tested and *count the number tested.
 */
static uint64_t exact_scan(const word_n *w, uint64_t *pos, uint64_t hi, uint64_t max_count,
                           uint64_t *count)
{
    unsigned slot;
    uint64_t c = wheel_ceil(*pos, &slot);
    uint64_t tested = 0;
    while (c <= hi && tested < max_count) {
        tested++;
        if (exact_divides(w, c)) {
            *pos = c + 1;
            *count = tested;
            return c;
        }
        if (++slot == PK_WHEEL_SLOTS) {
            slot = 0;
            c = (c - pk_wheel_residues[PK_WHEEL_SLOTS - 1]) + PK_WHEEL + pk_wheel_residues[0];
        } else {
            c += (uint64_t)(pk_wheel_residues[slot] - pk_wheel_residues[slot - 1]);
        }
    }
    *pos = c <= hi ? c : hi + 1;
    *count = tested;
    return 0;
}

static int record_hit(pk_job *job, uint64_t d)
{
    int rc = pk_job_divide_out(job, d);
    return rc < 0 ? rc : PK_PATH_CONTINUE;
}

int pk_td_word(pk_job *job, uint64_t *budget)
{
    word_n w;
    w.n = 0;
    size_t words = mpz_size(job->cof);
    for (size_t i = words; i-- > 0;)
        w.n = (w.n << 64) | (pk_u128)mpz_getlimbn(job->cof, (mp_size_t)i);
    w.n64 = (uint64_t)w.n;
    w.wide = (w.n >> 64) != 0;
    uint64_t unit = w.wide ? 2 : 1;
    uint64_t hi = job->eff_bound;

    /* The primes of the wheel itself. */
    static const uint8_t wheel_primes[] = {2, 3, 5, 7};
    for (unsigned i = 0; i < 4 && job->next <= 7; i++) {
        uint64_t p = wheel_primes[i];
        if (p < job->next)
            continue;
        if (p > hi) {
            job->next = hi + 1;
            return PK_PATH_CONTINUE;
        }
        if (*budget == 0)
            return PK_PATH_BUDGET;
        *budget = *budget > unit ? *budget - unit : 0;
        job->tested++;
        job->work += unit;
        job->next = p + 1;
        if (exact_divides(&w, p))
            return record_hit(job, p);
    }
    if (job->next <= 7)
        job->next = 8;

    while (job->next <= hi) {
        if (pk_job_stop_requested(job))
            return PK_PATH_INTERRUPT;
        if (*budget == 0)
            return PK_PATH_BUDGET;
        uint64_t allowed = *budget / unit ? *budget / unit : 1; /* overshoot by one at most */
        if (allowed > PK_BLOCK / unit) /* a 128-bit candidate costs about twice as much */
            allowed = PK_BLOCK / unit;

        uint64_t d = job->next;
        uint64_t tested = 0, hit = 0;
        uint64_t turn = d / PK_WHEEL;
        int fp_ok = turn >= PK_FP_FIRST_TURN && (!w.wide || d < PK_FP128_MAX_DIVISOR);
        if (!fp_ok || d % PK_WHEEL != 0) {
            /* Exact: small divisors, the tail of a partial turn, or divisors
               past the floating-point path's limit. */
            uint64_t stop = hi;
            if (turn < PK_FP_FIRST_TURN && PK_FP_FIRST_TURN * PK_WHEEL - 1 < stop)
                stop = PK_FP_FIRST_TURN * PK_WHEEL - 1;
            else if (fp_ok && (turn + 1) * PK_WHEEL - 1 < stop)
                stop = (turn + 1) * PK_WHEEL - 1;
            uint64_t pos = d;
            hit = exact_scan(&w, &pos, stop, allowed, &tested);
            job->next = hit ? hit + 1 : pos;
        } else {
            uint64_t turns = allowed / PK_WHEEL_SLOTS;
            uint64_t full_end = (hi + 1) / PK_WHEEL; /* turns ending at or before hi */
            if (w.wide && full_end > PK_FP128_MAX_DIVISOR / PK_WHEEL)
                full_end = PK_FP128_MAX_DIVISOR / PK_WHEEL;
            if (turns > full_end - turn)
                turns = full_end - turn;
            if (turns == 0) {
                /* Only a partial turn (or too little budget for a whole one). */
                uint64_t pos = d;
                hit = exact_scan(&w, &pos, hi, allowed, &tested);
                job->next = hit ? hit + 1 : pos;
            } else {
                hit = w.wide ? job->dispatch.scan128(w.n, turn, turn + turns)
                             : job->dispatch.scan64(w.n64, turn, turn + turns);
                if (hit) {
                    uint64_t t = hit / PK_WHEEL;
                    unsigned slot;
                    (void)wheel_ceil(hit, &slot);
                    tested = (t - turn) * PK_WHEEL_SLOTS + slot + 1;
                    job->next = hit + 1;
                } else {
                    tested = turns * PK_WHEEL_SLOTS;
                    job->next = (turn + turns) * PK_WHEEL;
                }
            }
        }
        job->tested += tested;
        job->work += tested * unit;
        *budget = *budget > tested * unit ? *budget - tested * unit : 0;
        if (hit)
            return record_hit(job, hit); /* the cofactor changed: re-dispatch */
    }
    return PK_PATH_CONTINUE;
}
