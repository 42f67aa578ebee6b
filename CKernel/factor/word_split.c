/*
 * word_split.c — the resumable splitter for composites below 2^128
 * (pk_wsplit_*): trial division by the primes below 2^10, a perfect-power
 * check, then Pollard-Brent rho below 2^PK_WSPLIT_RHO_BITS and ECM above,
 * all in budgeted stints, and the state's one-line text form.
 *
 * Text form (lowercase hexadecimal numbers, no leading zeros, one space
 * between fields):
 *   ws1 N METHOD WORK CREDIT TPOS [rho: C X Y YS Q R K I PHASE]
 *       [ecm: CURVE STAGE POS [stage >= 1: X Z [stage 2: GX GZ HX HZ ACC]]] SUM
 * Residues are in Montgomery form, as the state holds them; SUM is the 64-bit
 * FNV-1a hash of everything before the space that precedes it. Derived values
 * (Montgomery constants, the curve's a24, stage 2's baby steps and D·Q) are
 * recomputed by load, which refuses a state they contradict.
 */
#include <string.h>

#include "factor/word_impl.h"
#include "fnv.h"

#define TRIAL_COUNT 172          /* 2 and the odd primes below 2^10 */
#define TRIAL_COST 4u            /* one 128-bit remainder */
#define POWER_COST 1500u        /* measured about 15 us for a 128-bit n */
#define PK_WSPLIT_RHO_BITS 48

static unsigned bits128(pk_u128 n)
{
    uint64_t hi = (uint64_t)(n >> 64), lo = (uint64_t)n;
    return hi ? 128u - (unsigned)__builtin_clzll(hi) : (lo ? 64u - (unsigned)__builtin_clzll(lo) : 0u);
}

static uint32_t trial_prime(uint32_t i)
{
    return i == 0 ? 2u : pk_word_odd_primes[i - 1];
}

static void derive_mont(pk_wsplit *s)
{
    if (s->n & 1) {
        pk_mont128_init(&s->m128, s->n);
        if ((s->n >> 64) == 0)
            pk_mont64_init(&s->m64, (uint64_t)s->n);
    }
}

void pk_wsplit_init(pk_wsplit *s, pk_u128 n)
{
    memset(s, 0, sizeof *s);
    s->n = n;
    s->method = PK_WSPLIT_TRIAL;
    derive_mont(s);
}

static void start_method(pk_wsplit *s)
{
    if (bits128(s->n) <= PK_WSPLIT_RHO_BITS) {
        s->method = PK_WSPLIT_RHO;
        pk_w64_rho_start(&s->m64, &s->rho, 1);
    } else {
        s->method = PK_WSPLIT_ECM;
        memset(&s->ecm, 0, sizeof s->ecm);
    }
}

int pk_wsplit_run(pk_wsplit *s, uint64_t budget, pk_u128 *factor)
{
    s->credit = s->credit > UINT64_MAX - budget ? UINT64_MAX : s->credit + budget;
    for (;;) {
        if (s->method == PK_WSPLIT_TRIAL) {
            if (s->tpos < TRIAL_COUNT) {
                if (!pk_word_charge(&s->credit, &s->work, TRIAL_COST))
                    return 0;
                uint32_t p = trial_prime(s->tpos++);
                if (s->n % p == 0 && s->n != p) {
                    *factor = p;
                    return 1;
                }
                continue;
            }
            if (!pk_word_charge(&s->credit, &s->work, POWER_COST))
                return 0;
            pk_u128 root;
            unsigned k = pk_word_power128(s->n, &root);
            start_method(s);
            if (k > 1) {
                *factor = root;
                return 1;
            }
            continue;
        }
        if (s->method == PK_WSPLIT_RHO) {
            uint64_t f = 0;
            if (pk_w64_rho_run(&s->m64, &s->rho, &s->credit, &s->work, &f)) {
                *factor = f;
                return 1;
            }
            return 0;
        }
        return pk_w128_ecm_run(&s->m128, &s->ecm, bits128(s->n), &s->credit, &s->work, factor);
    }
}

const char *pk_wsplit_method(const pk_wsplit *s)
{
    switch (s->method) {
    case PK_WSPLIT_TRIAL:
        return "trial";
    case PK_WSPLIT_RHO:
        return "rho";
    default:
        return "ecm";
    }
}

uint64_t pk_wsplit_work(const pk_wsplit *s)
{
    return s->work;
}

/* ------------------------------------------------------------- text form */

/* Text is produced twice: once to measure (buf NULL) and hash, once to write. */
typedef struct textbuf {
    char *buf;
    size_t len;
    uint64_t hash; /* FNV-1a of what was put */
} textbuf;

static void put_char(textbuf *t, char c)
{
    if (t->buf)
        t->buf[t->len] = c;
    t->len++;
    t->hash = pk_fnv_fold(t->hash, (unsigned char)c);
}

static void put_hex(textbuf *t, pk_u128 v)
{
    char tmp[32];
    int k = 0;
    do {
        tmp[k++] = "0123456789abcdef"[(unsigned)(v & 15)];
        v >>= 4;
    } while (v);
    put_char(t, ' ');
    while (k)
        put_char(t, tmp[--k]);
}

/* The whole line: fields, then the hash of everything before its space. */
static void put_all(const pk_wsplit *s, textbuf *t)
{
    put_char(t, 'w');
    put_char(t, 's');
    put_char(t, '1');
    put_hex(t, s->n);
    put_hex(t, s->method);
    put_hex(t, s->work);
    put_hex(t, s->credit);
    put_hex(t, s->tpos);
    if (s->method == PK_WSPLIT_RHO) {
        const pk_wrho *r = &s->rho;
        put_hex(t, r->c);
        put_hex(t, r->x);
        put_hex(t, r->y);
        put_hex(t, r->ys);
        put_hex(t, r->q);
        put_hex(t, r->r);
        put_hex(t, r->k);
        put_hex(t, r->i);
        put_hex(t, r->phase);
    } else if (s->method == PK_WSPLIT_ECM) {
        const pk_wecm128 *e = &s->ecm;
        put_hex(t, e->curve);
        put_hex(t, e->stage);
        put_hex(t, e->pos);
        if (e->stage >= 1) {
            put_hex(t, e->x);
            put_hex(t, e->z);
        }
        if (e->stage == 2) {
            put_hex(t, e->gx);
            put_hex(t, e->gz);
            put_hex(t, e->hx);
            put_hex(t, e->hz);
            put_hex(t, e->acc);
        }
    }
    put_hex(t, t->hash);
}

size_t pk_wsplit_save(const pk_wsplit *s, char *buf, size_t cap)
{
    textbuf t = {NULL, 0, PK_FNV_START};
    put_all(s, &t);
    if (!buf || t.len > cap)
        return t.len;
    textbuf w = {buf, 0, PK_FNV_START};
    put_all(s, &w);
    return w.len;
}

/* Parse one field: lowercase hex, no leading zeros, at most `bits` bits. */
static int get_hex(const char **p, const char *end, unsigned bits, pk_u128 *out)
{
    const char *q = *p;
    if (q >= end || *q != ' ')
        return -1;
    q++;
    const char *start = q;
    pk_u128 v = 0;
    while (q < end && *q != ' ') {
        unsigned d;
        if (*q >= '0' && *q <= '9')
            d = (unsigned)(*q - '0');
        else if (*q >= 'a' && *q <= 'f')
            d = (unsigned)(*q - 'a' + 10);
        else
            return -1;
        if (q - start >= 32)
            return -1;
        v = (v << 4) | d;
        q++;
    }
    if (q == start || (q - start > 1 && *start == '0'))
        return -1;
    if (bits < 128 && (v >> bits) != 0)
        return -1;
    *out = v;
    *p = q;
    return 0;
}

static int get_u64(const char **p, const char *end, uint64_t *out)
{
    pk_u128 v;
    if (get_hex(p, end, 64, &v))
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int get_u32(const char **p, const char *end, uint32_t *out)
{
    pk_u128 v;
    if (get_hex(p, end, 32, &v))
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int get_res(const char **p, const char *end, pk_u128 n, pk_u128 *out)
{
    return get_hex(p, end, 128, out) || *out >= n ? -1 : 0;
}

static int load_rho(pk_wsplit *s, const char **p, const char *end)
{
    pk_wrho *r = &s->rho;
    pk_u128 v[5];
    if (bits128(s->n) > PK_WSPLIT_RHO_BITS || !(s->n & 1))
        return -1;
    for (int i = 0; i < 5; i++)
        if (get_res(p, end, s->n, &v[i]))
            return -1;
    r->c = (uint64_t)v[0];
    r->x = (uint64_t)v[1];
    r->y = (uint64_t)v[2];
    r->ys = (uint64_t)v[3];
    r->q = (uint64_t)v[4];
    if (get_u64(p, end, &r->r) || get_u64(p, end, &r->k) || get_u64(p, end, &r->i) ||
        get_u32(p, end, &r->phase))
        return -1;
    if (r->c < 1 || r->c + 2 >= (uint64_t)s->n || r->r == 0 || (r->r & (r->r - 1)) || r->r > (UINT64_C(1) << 62))
        return -1;
    switch (r->phase) {
    case 0:
        return r->i < r->r ? 0 : -1;
    case 1:
        return r->i < PK_WORD_RHO_BATCH && r->k < r->r && r->k >= r->i ? 0 : -1;
    case 2:
        return r->i <= PK_WORD_RHO_BATCH ? 0 : -1;
    default:
        return -1;
    }
}

static int load_ecm(pk_wsplit *s, const char **p, const char *end)
{
    pk_wecm128 *e = &s->ecm;
    if (bits128(s->n) <= PK_WSPLIT_RHO_BITS || !(s->n & 1))
        return -1;
    if (get_u32(p, end, &e->curve) || get_u32(p, end, &e->stage) || get_u32(p, end, &e->pos))
        return -1;
    if (e->curve > UINT32_MAX - 8 || e->stage > 2)
        return -1;
    const pk_word_ecm_level *L = pk_word_ecm_level_for(bits128(s->n), e->curve);
    e->level = (uint32_t)(L - pk_word_ecm_levels);
    if (e->stage == 0)
        return e->pos == 0 ? 0 : -1;
    if (get_res(p, end, s->n, &e->x) || get_res(p, end, s->n, &e->z))
        return -1;
    pk_wecm128 fresh = *e;
    if (pk_w128_ecm_curve(&s->m128, &fresh) != 1)
        return -1; /* a run would have left this curve at its setup */
    e->a24 = fresh.a24;
    if (e->stage == 1)
        return e->pos <= pk_word_ecm_stage1_end(L) ? 0 : -1;
    if (e->pos < pk_word_ecm_giant_start(L) || e->pos > pk_word_ecm_giant_end(L) + 1)
        return -1;
    if (get_res(p, end, s->n, &e->gx) || get_res(p, end, s->n, &e->gz) || get_res(p, end, s->n, &e->hx) ||
        get_res(p, end, s->n, &e->hz) || get_res(p, end, s->n, &e->acc))
        return -1;
    if (pk_w128_ecm_baby(&s->m128, e, L) != 1)
        return -1;
    return 0;
}

int pk_wsplit_load(pk_wsplit *out, pk_u128 n, const char *text, size_t len)
{
    if (!out || !text || len < 4 || memcmp(text, "ws1", 3) != 0)
        return -1;
    /* the checksum: the last field */
    size_t sp = len;
    while (sp > 0 && text[sp - 1] != ' ')
        sp--;
    if (sp < 4)
        return -1;
    const char *sump = text + sp - 1;
    pk_u128 sum;
    if (get_hex(&sump, text + len, 64, &sum) || sump != text + len)
        return -1;
    if ((uint64_t)sum != pk_fnv(text, sp - 1))
        return -1;
    pk_wsplit s;
    memset(&s, 0, sizeof s);
    const char *p = text + 3, *end = text + sp - 1;
    pk_u128 v;
    if (get_hex(&p, end, 128, &v) || v != n || n < 4)
        return -1;
    s.n = n;
    derive_mont(&s);
    if (get_u32(&p, end, &s.method) || get_u64(&p, end, &s.work) || get_u64(&p, end, &s.credit) ||
        get_u32(&p, end, &s.tpos))
        return -1;
    if (s.method > PK_WSPLIT_ECM || s.tpos > TRIAL_COUNT || (s.method != PK_WSPLIT_TRIAL && s.tpos != TRIAL_COUNT))
        return -1;
    if (s.method == PK_WSPLIT_RHO) {
        if (load_rho(&s, &p, end))
            return -1;
    } else if (s.method == PK_WSPLIT_ECM) {
        if (load_ecm(&s, &p, end))
            return -1;
    }
    if (p != end)
        return -1;
    *out = s;
    return 0;
}
