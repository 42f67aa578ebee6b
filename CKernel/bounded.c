/*
 * bounded.c — long GMP computations cut into stints of bounded size.
 *
 * A single mpz_mul, mpz_tdiv_r or mpz_gcd of million-digit numbers runs for
 * tens or hundreds of milliseconds and cannot be interrupted. The window check
 * of trial/gmp.c (a product reduced modulo the cofactor, then one gcd) is built
 * here from stints instead: every function below does one stint per call and
 * keeps its progress in a state structure, so the caller can poll its
 * interrupt flag between stints, return, and continue later from the same
 * state. The largest stint is one multiplication whose operands have at most
 * `cap` limbs each (or, for the gcd, one division step of the kind Euclid's
 * algorithm does when a quotient is huge, which random inputs almost never
 * need).
 *
 * Products (pk_bmul): x·y is the sum of the products of cap-limb slices of x
 * and y, added into the result at their limb offsets; two operands of similar
 * size above cap go by Karatsuba over stints instead (pk_karatsuba: three products
 * of half size, recursively, where the slices would need four).
 *
 * Remainders (pk_modulus, pk_reduce, pk_fold): Barrett reduction with a
 * reciprocal mu = floor(2^(n + cmax) / m) of the n-bit modulus (cmax: the
 * largest block), computed once by Newton's iteration (itself in stints). A number is reduced from its top in
 * blocks of c <= cmax bits: x = r·2^c + block, q = ((x >> (n-1)) ·
 * (mu >> (cmax-c))) >> (c+1), r = x - q·m, then a few subtractions of m. The estimate q is at
 * most a few units below floor(x/m) when mu is exact; whatever mu is, the
 * remainder is corrected exactly (mpz_fdiv_r if more than a few corrections
 * are needed), so the reciprocal's accuracy only matters for speed. Long
 * numbers are first folded (pk_fold: one product per block instead of two,
 * with a constant 2^split mod m) and Barrett only finishes.
 *
 * Greatest common divisor (pk_gcd): a half-gcd recursion written as an
 * explicit stack of frames. A frame holds a pair (a, b), a >= b >= 0, and,
 * except at the root, the matrix M with det ±1 such that (a0, b0) = M·(a, b)
 * for the pair it started from. To shrink a frame's pair it takes the top s
 * bits of both numbers as a child frame, lets the child reduce them to about
 * half (plus a margin), and applies the inverse of the child's matrix to the
 * low bits of its own numbers (the child's pair is already the image of the
 * high bits). Any integer matrix of determinant ±1 maps a pair to a pair with
 * the same gcd, so correctness never depends on the truncated numbers giving
 * the true quotients: a result that comes out negative or out of order is made
 * positive and swapped (columns of M follow), and a frame whose step made no
 * progress does one exact division step next. Small frames use Lehmer steps
 * on the top 127 bits (double-word arithmetic, applied with mpz_mul_ui); the
 * root finishes with mpz_gcd once b is small. Every stint leaves the state
 * consistent, so the gcd resumes exactly where it stopped.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

/* ----------------------------------------------------------- products */

int pk_bmul_stint(mpz_t rop, const mpz_t x, const mpz_t y, size_t cap, pk_bmul *st, mpz_t tmp)
{
    size_t xn = mpz_size(x), yn = mpz_size(y);
    if (xn < yn) {
        const __mpz_struct *t = x;
        x = y;
        y = t;
        size_t u = xn;
        xn = yn;
        yn = u;
    }
    if (cap == 0)
        cap = 1;
    if (yn > cap && 2 * yn >= xn && (st->km || (st->km = malloc(sizeof *st->km)) != NULL)) {
        /* Balanced and larger than a stint: Karatsuba over stints costs far
           fewer stints than all the slice products. */
        if (st->i == 0) {
            if (!st->km_ready) {
                pk_karatsuba_init(st->km);
                st->km_ready = 1;
            }
            mpz_roinit_n(st->xv, mpz_limbs_read(x), (mp_size_t)xn);
            mpz_roinit_n(st->yv, mpz_limbs_read(y), (mp_size_t)yn);
            pk_karatsuba_start(st->km, rop, st->xv, st->yv, cap);
            st->i = 1;
        }
        if (!pk_karatsuba_stint(st->km))
            return 0;
        if (st->km->max_limbs > st->max_limbs)
            st->max_limbs = st->km->max_limbs;
        if ((mpz_sgn(x) < 0) != (mpz_sgn(y) < 0))
            mpz_neg(rop, rop);
        st->i = 0;
        return 1;
    }
    if (yn == 0 || xn <= cap) {
        mpz_mul(rop, x, y);
        if (yn && xn > st->max_limbs)
            st->max_limbs = xn;
        st->i = 0;
        return 1;
    }
    size_t cy = yn < cap ? yn : cap, cx = cap;
    size_t nx = (xn + cx - 1) / cx, ny = (yn + cy - 1) / cy;
    size_t rn = xn + yn;
    mp_limb_t *rp;
    if (st->i == 0) {
        rp = mpz_limbs_write(rop, (mp_size_t)rn);
        memset(rp, 0, rn * sizeof *rp);
    }
    size_t ix = st->i % nx, iy = st->i / nx;
    size_t ox = ix * cx, oy = iy * cy;
    size_t lx = xn - ox < cx ? xn - ox : cx, ly = yn - oy < cy ? yn - oy : cy;
    mpz_t xs, ys;
    mpz_roinit_n(xs, mpz_limbs_read(x) + ox, (mp_size_t)lx);
    mpz_roinit_n(ys, mpz_limbs_read(y) + oy, (mp_size_t)ly);
    mpz_mul(tmp, xs, ys);
    if (lx > st->max_limbs || ly > st->max_limbs)
        st->max_limbs = lx > ly ? lx : ly;
    rp = mpz_limbs_modify(rop, (mp_size_t)rn);
    size_t tn = mpz_size(tmp);
    if (tn)
        mpn_add(rp + ox + oy, rp + ox + oy, (mp_size_t)(rn - ox - oy), mpz_limbs_read(tmp), (mp_size_t)tn);
    if (++st->i < nx * ny)
        return 0;
    st->i = 0;
    mp_size_t sn = (mp_size_t)rn;
    mpz_limbs_finish(rop, (mpz_sgn(x) < 0) != (mpz_sgn(y) < 0) ? -sn : sn);
    return 1;
}

/* Karatsuba over stints: x·y = z2·B^(2h) + (z1 - z0 - z2)·B^h + z0 with
   z0 = x0·y0, z2 = x1·y1, z1 = (x0 + x1)(y0 + y1), recursively until both
   operands of a product have at most cap limbs (then one mpz_mul, one stint).
   Three products of half size instead of four: the stints of a product n
   times larger than cap cost about n^1.58 products of size cap. */
void pk_karatsuba_init(pk_karatsuba *k)
{
    memset(k, 0, sizeof *k);
    for (unsigned i = 0; i < PK_KARATSUBA_DEPTH; i++) {
        mpz_init(k->fr[i].sx);
        mpz_init(k->fr[i].sy);
        mpz_init(k->fr[i].z0);
        mpz_init(k->fr[i].z1);
        mpz_init(k->fr[i].z2);
    }
}

void pk_karatsuba_clear(pk_karatsuba *k)
{
    for (unsigned i = 0; i < PK_KARATSUBA_DEPTH; i++) {
        mpz_clear(k->fr[i].sx);
        mpz_clear(k->fr[i].sy);
        mpz_clear(k->fr[i].z0);
        mpz_clear(k->fr[i].z1);
        mpz_clear(k->fr[i].z2);
    }
}

static void kmul_push(pk_karatsuba *k, mpz_ptr out, mpz_srcptr x, mpz_srcptr y)
{
    pk_karatsuba_frame *f = &k->fr[k->depth++];
    f->out = out;
    f->x = x;
    f->y = y;
    f->phase = 0;
}

void pk_karatsuba_start(pk_karatsuba *k, mpz_t out, const mpz_t x, const mpz_t y, size_t cap)
{
    k->cap = cap ? cap : 1;
    k->depth = 0;
    kmul_push(k, out, x, y);
}

/* A read-only view of limbs [lo, lo + n) of x, clipped to its size. */
static void limb_view(mpz_t v, mpz_srcptr x, size_t lo, size_t n)
{
    size_t xn = mpz_size(x);
    if (lo >= xn)
        n = 0;
    else if (lo + n > xn)
        n = xn - lo;
    mpz_roinit_n(v, mpz_limbs_read(x) + (n ? lo : 0), (mp_size_t)n);
}

int pk_karatsuba_stint(pk_karatsuba *k)
{
    pk_karatsuba_frame *f = &k->fr[k->depth - 1];
    size_t xn = mpz_size(f->x), yn = mpz_size(f->y), mx = xn > yn ? xn : yn;
    switch (f->phase) {
    case 0:
        if (mx <= k->cap || k->depth == PK_KARATSUBA_DEPTH) {
            mpz_mul(f->out, f->x, f->y);
            if (mx > k->max_limbs)
                k->max_limbs = mx;
            break;
        }
        f->h = (mx + 1) / 2;
        limb_view(f->x0, f->x, 0, f->h);
        limb_view(f->x1, f->x, f->h, mx);
        limb_view(f->y0, f->y, 0, f->h);
        limb_view(f->y1, f->y, f->h, mx);
        mpz_add(f->sx, f->x0, f->x1);
        mpz_add(f->sy, f->y0, f->y1);
        f->phase = 1;
        kmul_push(k, f->z0, f->x0, f->y0);
        return 0;
    case 1:
        f->phase = 2;
        kmul_push(k, f->z2, f->x1, f->y1);
        return 0;
    case 2:
        f->phase = 3;
        kmul_push(k, f->z1, f->sx, f->sy);
        return 0;
    case 3:
        mpz_sub(f->z1, f->z1, f->z0);
        mpz_sub(f->z1, f->z1, f->z2);
        mpz_mul_2exp(f->out, f->z2, 2 * 64 * f->h);
        mpz_mul_2exp(f->z1, f->z1, 64 * f->h);
        mpz_add(f->out, f->out, f->z1);
        mpz_add(f->out, f->out, f->z0);
        break;
    }
    k->depth--;
    return k->depth == 0;
}

void pk_bmul_clear(pk_bmul *st)
{
    if (st->km) {
        if (st->km_ready)
            pk_karatsuba_clear(st->km);
        free(st->km);
    }
    st->km = NULL;
    st->km_ready = 0;
    st->i = 0;
}

/* ---------------------------------------------------- Barrett modulus */

void pk_modulus_init(pk_modulus *md)
{
    memset(md, 0, sizeof *md);
    mpz_init(md->m);
    mpz_init(md->mu);
    mpz_init(md->r);
    mpz_init(md->t1);
    mpz_init(md->t2);
    mpz_init(md->tmp);
}

void pk_modulus_clear(pk_modulus *md)
{
    pk_bmul_clear(&md->mp);
    mpz_clear(md->m);
    mpz_clear(md->mu);
    mpz_clear(md->r);
    mpz_clear(md->t1);
    mpz_clear(md->t2);
    mpz_clear(md->tmp);
}

void pk_modulus_set(pk_modulus *md, const mpz_t m, size_t cap)
{
    mpz_set(md->m, m);
    md->n = mpz_sizeinbase(m, 2);
    md->cap = cap;
    md->ready = 0;
    md->phase = 0;
    md->mp.i = 0;
    /* Barrett blocks take at most cmax bits, so mu is only needed to that
       precision: mu = floor(2^(n + cmax) / m), which is R_K >> (K - cmax) for
       the reciprocal R_K = floor(2^(2K) / m_K) of the top K = cmax + 64 bits
       of m, up to a unit or two (Barrett's correction absorbs them). */
    md->cmax = 64 * (cap ? cap : 1) - 1;
    if (md->cmax > md->n)
        md->cmax = md->n;
    size_t k = md->cmax + 64 < md->n ? md->cmax + 64 : md->n;
    md->ktop = k;
    /* Precisions from ktop down to the base, each a little over half the one above. */
    md->nk = 0;
    while (k > 64 && md->nk < 63) {
        md->ks[md->nk++] = k;
        k = k / 2 + 8;
    }
    md->ks[md->nk] = k; /* the base: computed exactly */
    md->ki = md->nk;
}

/* One stint of Newton's iteration for mu; returns 1 once mu is ready. */
int pk_modulus_stint(pk_modulus *md)
{
    if (md->ready)
        return 1;
    size_t n = md->n;
    if (md->ki == md->nk && md->phase == 0) {
        /* R_k = floor(2^(2k) / m_k), m_k the top k bits of m. */
        size_t k = md->ks[md->nk];
        mpz_tdiv_q_2exp(md->t1, md->m, n - k);
        mpz_set_ui(md->r, 0);
        mpz_setbit(md->r, 2 * k);
        mpz_tdiv_q(md->r, md->r, md->t1);
        if (md->nk == 0) {
            mpz_tdiv_q_2exp(md->mu, md->r, md->ktop - md->cmax);
            md->ready = 1;
            return 1;
        }
        md->phase = 1;
        return 0;
    }
    size_t k = md->ks[md->ki], K = md->ks[md->ki - 1];
    switch (md->phase) {
    case 1: /* t1 = R_k^2 */
        if (!pk_bmul_stint(md->t1, md->r, md->r, md->cap, &md->mp, md->tmp))
            return 0;
        md->phase = 2;
        return 0;
    case 2: /* t2 = m_K, the top K bits of m */
        mpz_tdiv_q_2exp(md->t2, md->m, n - K);
        md->phase = 3;
        return 0;
    case 3: /* mu = m_K · R_k^2 (mu is scratch until the last step) */
        if (!pk_bmul_stint(md->mu, md->t2, md->t1, md->cap, &md->mp, md->tmp))
            return 0;
        /* R_K = 2^(K-k+1)·R_k - floor(m_K·R_k^2 / 2^(2k)) */
        mpz_tdiv_q_2exp(md->mu, md->mu, 2 * k);
        mpz_mul_2exp(md->r, md->r, K - k + 1);
        mpz_sub(md->r, md->r, md->mu);
        md->ki--;
        md->phase = 1;
        if (md->ki == 0) {
            mpz_tdiv_q_2exp(md->mu, md->r, md->ktop - md->cmax);
            md->ready = 1;
            return 1;
        }
        return 0;
    }
    return 0;
}

void pk_reduce_start(pk_reduce *rd, const mpz_t x, const pk_modulus *md)
{
    size_t L = mpz_sgn(x) ? mpz_sizeinbase(x, 2) : 0, n = md->n;
    rd->phase = 0;
    rd->mp.i = 0;
    if (L < n) {
        mpz_set(rd->r, x);
        rd->pos = 0;
    } else {
        /* The top n-1 bits are below m. */
        rd->pos = L - (n - 1);
        mpz_tdiv_q_2exp(rd->r, x, rd->pos);
    }
}

void pk_reduce_init(pk_reduce *rd)
{
    memset(rd, 0, sizeof *rd);
    mpz_init(rd->r);
    mpz_init(rd->x);
    mpz_init(rd->q);
    mpz_init(rd->t);
    mpz_init(rd->mu_c);
}

void pk_reduce_clear(pk_reduce *rd)
{
    pk_bmul_clear(&rd->mp);
    mpz_clear(rd->r);
    mpz_clear(rd->x);
    mpz_clear(rd->q);
    mpz_clear(rd->t);
    mpz_clear(rd->mu_c);
}

/* out = bits [lo, lo + c) of x >= 0, reading only the limbs holding them. */
static void bits_of(mpz_t out, const mpz_t x, size_t lo, size_t c)
{
    size_t xn = mpz_size(x), l0 = lo / 64, l1 = (lo + c + 63) / 64;
    if (l1 > xn)
        l1 = xn;
    if (l0 >= l1) {
        mpz_set_ui(out, 0);
        return;
    }
    mpz_t v;
    mpz_roinit_n(v, mpz_limbs_read(x) + l0, (mp_size_t)(l1 - l0));
    mpz_tdiv_q_2exp(out, v, lo % 64);
    mpz_tdiv_r_2exp(out, out, c);
}

/* Exact correction of x - q·m into [0, m). */
static void reduce_fix(mpz_t r, const mpz_t m)
{
    for (int i = 0; i < 4; i++) {
        if (mpz_sgn(r) < 0)
            mpz_add(r, r, m);
        else if (mpz_cmp(r, m) >= 0)
            mpz_sub(r, r, m);
        else
            return;
    }
    mpz_fdiv_r(r, r, m);
}

int pk_reduce_stint(pk_reduce *rd, const mpz_t x, pk_modulus *md, mpz_t tmp)
{
    size_t n = md->n;
    for (;;) {
        switch (rd->phase) {
        case 0: {
            if (rd->pos == 0) {
                if (mpz_cmp(rd->r, md->m) >= 0) /* not reached: r < 2^(n-1) or reduced */
                    mpz_fdiv_r(rd->r, rd->r, md->m);
                return 1;
            }
            /* c + 1 bits of quotient estimate fit in cap limbs: one product each */
            size_t c = md->cmax;
            if (c > rd->pos)
                c = rd->pos;
            rd->c = c;
            /* x = r·2^c + the next c bits */
            rd->pos -= c;
            bits_of(rd->t, x, rd->pos, c);
            mpz_mul_2exp(rd->x, rd->r, c);
            mpz_add(rd->x, rd->x, rd->t);
            if (mpz_cmp(rd->x, md->m) < 0) {
                mpz_swap(rd->r, rd->x);
                continue; /* no division needed for this block */
            }
            mpz_tdiv_q_2exp(rd->q, rd->x, n - 1);
            if (c < md->cmax)
                mpz_tdiv_q_2exp(rd->mu_c, md->mu, md->cmax - c);
            rd->phase = 1;
            return 0;
        }
        case 1: /* t = (x >> (n-1)) · mu_c, mu_c = mu >> (cmax - c) = floor(2^(n+c) / m) */
            if (!pk_bmul_stint(rd->t, rd->q, rd->c < md->cmax ? rd->mu_c : md->mu, md->cap, &rd->mp, tmp))
                return 0;
            mpz_tdiv_q_2exp(rd->q, rd->t, rd->c + 1);
            rd->phase = 2;
            return 0;
        case 2: /* t = q·m; r = x - t, corrected */
            if (!pk_bmul_stint(rd->t, rd->q, md->m, md->cap, &rd->mp, tmp))
                return 0;
            mpz_sub(rd->r, rd->x, rd->t);
            reduce_fix(rd->r, md->m);
            rd->phase = 0;
            if (rd->pos == 0)
                return 1;
            return 0;
        }
    }
}

/* Folding: x mod m up to a multiple, from the top, one product per block.
   With F = 2^split mod m (split = n + 1 + c), the state r (below about
   2^(split + 1)) takes the next c bits of x, r = r·2^c + block, and its part
   above split is folded down: r = (r >> split)·F + (r mod 2^split), which is
   congruent modulo m. One product of at most c + 2 by n bits per c bits of x,
   where Barrett needs two; the result is below about 2^(n + c + 2), and a
   Barrett block finishes it. */
void pk_fold_init(pk_fold *fd)
{
    memset(fd, 0, sizeof *fd);
    mpz_init(fd->r);
    mpz_init(fd->hi);
    mpz_init(fd->t);
}

void pk_fold_clear(pk_fold *fd)
{
    pk_bmul_clear(&fd->mp);
    mpz_clear(fd->r);
    mpz_clear(fd->hi);
    mpz_clear(fd->t);
}

void pk_fold_start(pk_fold *fd, const mpz_t x, size_t split, size_t c)
{
    size_t L = mpz_sgn(x) ? mpz_sizeinbase(x, 2) : 0;
    fd->phase = 0;
    fd->mp.i = 0;
    if (L <= split || c == 0) {
        mpz_set(fd->r, x);
        fd->pos = 0;
        return;
    }
    fd->pos = (L - split + c - 1) / c * c;
    mpz_tdiv_q_2exp(fd->r, x, fd->pos);
}

int pk_fold_stint(pk_fold *fd, const mpz_t x, const mpz_t F, size_t split, size_t c, size_t cap, mpz_t tmp)
{
    for (;;) {
        if (fd->phase == 1) {
            if (!pk_bmul_stint(fd->t, fd->hi, F, cap, &fd->mp, tmp))
                return 0;
            mpz_add(fd->r, fd->r, fd->t);
            fd->phase = 0;
            return fd->pos == 0;
        }
        if (fd->pos == 0)
            return 1;
        fd->pos -= c;
        bits_of(fd->t, x, fd->pos, c);
        mpz_mul_2exp(fd->r, fd->r, c);
        mpz_add(fd->r, fd->r, fd->t);
        if (mpz_sizeinbase(fd->r, 2) <= split)
            continue;
        mpz_tdiv_q_2exp(fd->hi, fd->r, split);
        mpz_tdiv_r_2exp(fd->r, fd->r, split);
        fd->phase = 1;
    }
}

/* --------------------------------------------------------------- gcd */

#define GCD_MARGIN 64u          /* bits a child stops above half its slice */
#define GCD_WORD_BITS 4096u      /* frames this small take Lehmer steps */
#define GCD_FINISH_BITS 16384u   /* the root calls mpz_gcd once b is this small */

static void frame_init(pk_gcd_frame *f)
{
    mpz_init(f->a);
    mpz_init(f->b);
    for (int i = 0; i < 4; i++) {
        mpz_init(f->m[i]);
        mpz_init(f->t[i]);
    }
}

static void frame_clear(pk_gcd_frame *f)
{
    mpz_clear(f->a);
    mpz_clear(f->b);
    for (int i = 0; i < 4; i++) {
        mpz_clear(f->m[i]);
        mpz_clear(f->t[i]);
    }
}

void pk_gcd_init(pk_gcd *g)
{
    memset(g, 0, sizeof *g);
    mpz_init(g->tmp);
}

void pk_gcd_clear(pk_gcd *g)
{
    pk_bmul_clear(&g->mp);
    for (unsigned i = 0; i < g->nfr; i++)
        frame_clear(&g->fr[i]);
    free(g->fr);
    mpz_clear(g->tmp);
    memset(g, 0, sizeof *g);
}

static int ensure_frames(pk_gcd *g, unsigned n)
{
    if (n <= g->nfr)
        return PK_OK;
    unsigned cap = g->nfr ? 2 * g->nfr : 16;
    while (cap < n)
        cap *= 2;
    pk_gcd_frame *fr = realloc(g->fr, cap * sizeof *fr);
    if (!fr)
        return PK_E_NOMEM;
    g->fr = fr;
    for (unsigned i = g->nfr; i < cap; i++)
        frame_init(&fr[i]);
    g->nfr = cap;
    return PK_OK;
}

static void frame_identity(pk_gcd_frame *f)
{
    mpz_set_ui(f->m[0], 1);
    mpz_set_ui(f->m[1], 0);
    mpz_set_ui(f->m[2], 0);
    mpz_set_ui(f->m[3], 1);
    f->det = 1;
}

int pk_gcd_start(pk_gcd *g, const mpz_t a, const mpz_t b, size_t cap)
{
    if (ensure_frames(g, 1) != PK_OK)
        return PK_E_NOMEM;
    pk_gcd_frame *f = &g->fr[0];
    mpz_abs(f->a, a);
    mpz_abs(f->b, b);
    if (mpz_cmp(f->a, f->b) < 0)
        mpz_swap(f->a, f->b);
    f->track = 0;
    f->stop = GCD_FINISH_BITS;
    f->phase = 0;
    f->force_div = 0;
    g->depth = 1;
    g->cap = cap ? cap : 1;
    g->mp.i = 0;
    return PK_OK;
}

/* Positive entries, a >= b: signs and order move into M's columns. */
static void normalize(pk_gcd_frame *f)
{
    if (mpz_sgn(f->a) < 0) {
        mpz_neg(f->a, f->a);
        if (f->track) {
            mpz_neg(f->m[0], f->m[0]);
            mpz_neg(f->m[2], f->m[2]);
            f->det = -f->det;
        }
    }
    if (mpz_sgn(f->b) < 0) {
        mpz_neg(f->b, f->b);
        if (f->track) {
            mpz_neg(f->m[1], f->m[1]);
            mpz_neg(f->m[3], f->m[3]);
            f->det = -f->det;
        }
    }
    if (mpz_cmp(f->a, f->b) < 0) {
        mpz_swap(f->a, f->b);
        if (f->track) {
            mpz_swap(f->m[0], f->m[1]);
            mpz_swap(f->m[2], f->m[3]);
            f->det = -f->det;
        }
    }
}

/* One Euclid step: (a, b) <- (b, a mod b), M <- M·[[q, 1], [1, 0]]. b > 0. */
static void div_step(pk_gcd_frame *f)
{
    mpz_tdiv_qr(f->t[0], f->t[1], f->a, f->b);
    mpz_swap(f->a, f->b);
    mpz_swap(f->b, f->t[1]);
    if (f->track) {
        mpz_mul(f->t[1], f->m[0], f->t[0]);
        mpz_add(f->t[1], f->t[1], f->m[1]);
        mpz_swap(f->m[1], f->m[0]);
        mpz_swap(f->m[0], f->t[1]);
        mpz_mul(f->t[1], f->m[2], f->t[0]);
        mpz_add(f->t[1], f->t[1], f->m[3]);
        mpz_swap(f->m[3], f->m[2]);
        mpz_swap(f->m[2], f->t[1]);
        f->det = -f->det;
    }
}

/* A Lehmer step: Euclid on the top 127 bits of a and b (the same shift)
   while the remainders keep at least 64 bits, so the matrix entries fit in a
   word (or, when the numbers fit in 127 bits, exactly down to the frame's
   stop); then the inverse of that matrix applied to a and b. */
static void word_step(pk_gcd_frame *f)
{
    size_t na = mpz_sizeinbase(f->a, 2);
    size_t p = na > 127 ? na - 127 : 0;
    pk_u128 x, y;
    mpz_tdiv_q_2exp(f->t[0], f->a, p);
    mpz_tdiv_q_2exp(f->t[1], f->b, p);
    {
        const mp_limb_t *xp = mpz_limbs_read(f->t[0]), *yp = mpz_limbs_read(f->t[1]);
        size_t xn = mpz_size(f->t[0]), yn = mpz_size(f->t[1]);
        x = xn > 1 ? (pk_u128)xp[1] << 64 | xp[0] : xn ? xp[0] : 0;
        y = yn > 1 ? (pk_u128)yp[1] << 64 | yp[0] : yn ? yp[0] : 0;
    }
    uint64_t u00 = 1, u01 = 0, u10 = 0, u11 = 1;
    unsigned k = 0;
    pk_u128 floor_y = p ? (pk_u128)1 << 64 : 1;
    for (;;) {
        if (y < floor_y)
            break;
        size_t yb = (y >> 64) ? 128 - (size_t)__builtin_clzll((uint64_t)(y >> 64))
                              : 64 - (size_t)__builtin_clzll((uint64_t)y);
        if (yb + p <= f->stop)
            break;
        pk_u128 q, r = x - y;
        if (r < y) {
            q = 1;
        } else if (r - y < y) {
            q = 2;
            r -= y;
        } else {
            q = x / y;
            r = x - q * y;
        }
        /* entries stay below 2^64: they are at most x0 / x <= 2^127 / 2^64 */
        if (q >> 64)
            break;
        uint64_t qq = (uint64_t)q;
        pk_u128 t0 = (pk_u128)u00 * qq + u01, t1 = (pk_u128)u10 * qq + u11;
        if ((t0 >> 64) || (t1 >> 64))
            break;
        x = y;
        y = r;
        u01 = u00;
        u00 = (uint64_t)t0;
        u11 = u10;
        u10 = (uint64_t)t1;
        k++;
    }
    if (k == 0) {
        div_step(f);
        return;
    }
    /* (a, b) <- det·(u11·a - u01·b, u00·b - u10·a), det = (-1)^k */
    mpz_mul_ui(f->t[0], f->a, u11);
    mpz_submul_ui(f->t[0], f->b, u01);
    mpz_mul_ui(f->t[1], f->b, u00);
    mpz_submul_ui(f->t[1], f->a, u10);
    if (k & 1) {
        mpz_neg(f->t[0], f->t[0]);
        mpz_neg(f->t[1], f->t[1]);
    }
    mpz_swap(f->a, f->t[0]);
    mpz_swap(f->b, f->t[1]);
    if (f->track) {
        /* M <- M·U */
        mpz_mul_ui(f->t[0], f->m[0], u00);
        mpz_addmul_ui(f->t[0], f->m[1], u10);
        mpz_mul_ui(f->t[1], f->m[0], u01);
        mpz_addmul_ui(f->t[1], f->m[1], u11);
        mpz_mul_ui(f->t[2], f->m[2], u00);
        mpz_addmul_ui(f->t[2], f->m[3], u10);
        mpz_mul_ui(f->t[3], f->m[2], u01);
        mpz_addmul_ui(f->t[3], f->m[3], u11);
        for (int i = 0; i < 4; i++)
            mpz_swap(f->m[i], f->t[i]);
        if (k & 1)
            f->det = -f->det;
    }
    normalize(f);
}

/* Phases of a frame applying its finished child's matrix C to the low p
   bits of its pair (the child's pair is the high part already). */
enum {
    PH_CHOOSE = 0,
    PH_APPLY = 1,   /* 1..4: the four products of C's entries with a and b */
    PH_COMBINE = 5, /* the new pair */
    PH_MAT = 6,     /* 6..13: the eight products of M·C */
    PH_DONE = 14
};

/* One stint of work on the top frame. Returns 1 when the gcd is in out. */
static int gcd_stint(pk_gcd *g, mpz_t out)
{
    pk_gcd_frame *f = &g->fr[g->depth - 1];
    if (f->phase == PH_CHOOSE) {
        if (mpz_sgn(f->b) == 0 || mpz_sizeinbase(f->b, 2) <= f->stop) {
            if (g->depth == 1) {
                mpz_gcd(out, f->a, f->b);
                return 1;
            }
            /* Hand back to the parent, which keeps only the low p bits of
               its pair: the child's pair already is C^-1 of the high parts. */
            g->depth--;
            pk_gcd_frame *up = &g->fr[g->depth - 1];
            mpz_tdiv_r_2exp(up->a, up->a, up->p);
            mpz_tdiv_r_2exp(up->b, up->b, up->p);
            up->phase = PH_APPLY;
            return 0;
        }
        if (f->force_div) {
            f->force_div = 0;
            div_step(f);
            return 0;
        }
        size_t na = mpz_sizeinbase(f->a, 2);
        if (na <= GCD_WORD_BITS) {
            word_step(f);
            return 0;
        }
        /* The child's slice: twice the bits still to remove, so that its
           half is what this frame needs; at most half of a when more than
           half must go (the root, a frame's first child), else two thirds. */
        size_t s = 2 * (na - f->stop);
        if (s >= na)
            s = na / 2;
        else if (s > na / 3 * 2)
            s = na / 3 * 2;
        if (s < 4 * GCD_MARGIN) {
            word_step(f);
            return 0;
        }
        if (ensure_frames(g, g->depth + 1) != PK_OK)
            return PK_E_NOMEM;
        f = &g->fr[g->depth - 1]; /* the array may have moved */
        pk_gcd_frame *c = &g->fr[g->depth];
        size_t p = na - s;
        mpz_tdiv_q_2exp(c->b, f->b, p);
        c->stop = s / 2 + GCD_MARGIN;
        if (mpz_sgn(c->b) == 0 || mpz_sizeinbase(c->b, 2) <= c->stop) {
            div_step(f); /* a huge quotient: the top of b is too small to work on */
            return 0;
        }
        mpz_tdiv_q_2exp(c->a, f->a, p);
        c->track = 1;
        c->phase = PH_CHOOSE;
        c->force_div = 0;
        frame_identity(c);
        f->na = na;
        f->p = p;
        g->depth++;
        return 0;
    }
    pk_gcd_frame *c = &g->fr[g->depth];
    /* C = [[c00, c01], [c10, c11]]; C^-1 = det·[[c11, -c01], [-c10, c00]] */
    mpz_srcptr x = NULL, y = NULL;
    mpz_ptr dst = NULL;
    switch (f->phase) {
    case PH_APPLY + 0: x = c->m[3]; y = f->a; dst = f->t[0]; break;
    case PH_APPLY + 1: x = c->m[1]; y = f->b; dst = f->t[1]; break;
    case PH_APPLY + 2: x = c->m[0]; y = f->b; dst = f->t[2]; break;
    case PH_APPLY + 3: x = c->m[2]; y = f->a; dst = f->t[3]; break;
    case PH_COMBINE:
        /* (a, b) = (a_c·2^p, b_c·2^p) + det·(c11·a_lo - c01·b_lo, c00·b_lo - c10·a_lo) */
        mpz_sub(f->a, f->t[0], f->t[1]);
        mpz_sub(f->b, f->t[2], f->t[3]);
        if (c->det < 0) {
            mpz_neg(f->a, f->a);
            mpz_neg(f->b, f->b);
        }
        mpz_mul_2exp(f->t[0], c->a, f->p);
        mpz_add(f->a, f->a, f->t[0]);
        mpz_mul_2exp(f->t[0], c->b, f->p);
        mpz_add(f->b, f->b, f->t[0]);
        f->phase = f->track ? PH_MAT : PH_DONE;
        return 0;
    case PH_MAT + 0: x = f->m[0]; y = c->m[0]; dst = f->t[0]; break; /* n00 = m00 c00 + m01 c10 */
    case PH_MAT + 1: x = f->m[1]; y = c->m[2]; dst = c->t[0]; break;
    case PH_MAT + 2: x = f->m[0]; y = c->m[1]; dst = f->t[1]; break; /* n01 = m00 c01 + m01 c11 */
    case PH_MAT + 3: x = f->m[1]; y = c->m[3]; dst = c->t[1]; break;
    case PH_MAT + 4: x = f->m[2]; y = c->m[0]; dst = f->t[2]; break; /* n10 = m10 c00 + m11 c10 */
    case PH_MAT + 5: x = f->m[3]; y = c->m[2]; dst = c->t[2]; break;
    case PH_MAT + 6: x = f->m[2]; y = c->m[1]; dst = f->t[3]; break; /* n11 = m10 c01 + m11 c11 */
    case PH_MAT + 7: x = f->m[3]; y = c->m[3]; dst = c->t[3]; break;
    case PH_DONE:
        if (f->track) {
            for (int i = 0; i < 4; i++) {
                mpz_add(f->t[i], f->t[i], c->t[i]);
                mpz_swap(f->m[i], f->t[i]);
            }
            if (c->det < 0)
                f->det = -f->det;
        }
        normalize(f);
        /* No bit gained: the truncated matrix did not fit these numbers; divide once. */
        if (mpz_sizeinbase(f->a, 2) >= f->na && mpz_sgn(f->b) != 0)
            f->force_div = 1;
        f->phase = PH_CHOOSE;
        return 0;
    }
    if (!pk_bmul_stint(dst, x, y, g->cap, &g->mp, g->tmp))
        return 0;
    f->phase++;
    return 0;
}

int pk_gcd_run(pk_gcd *g, mpz_t out, pk_poll_fn poll, void *ctx)
{
    for (;;) {
        if (poll && poll(ctx))
            return 0;
        g->stints++;
        int rc = gcd_stint(g, out);
        if (rc != 0)
            return rc;
    }
}
