/*
 * primekit.h — the public C interface of the PrimeKit kernel.
 *
 * PrimeKit answers "is this number prime, and what are its factors?" as
 * resumable work — by default completely (trial division, then perfect
 * powers, primality and splitting by rho/SQUFOF/ECM), or by trial division
 * over a divisor range: a job is created from a decimal candidate, is
 * advanced in bounded steps, can be interrupted from any thread (or a signal
 * handler), and can be written to a portable text checkpoint and rebuilt from
 * it in another process or on another machine.
 *
 * This header is the whole contract. Anything not declared here is private.
 *
 * Conventions
 * - Every function returns an int status: 0 and positive values are outcomes
 *   (PK_OK, PK_MORE, PK_DONE, PK_INTERRUPTED), negative values are errors.
 *   Status values never change once released.
 * - Output arguments come last.
 * - Strings come back through a caller buffer: (char *buf, size_t cap,
 *   size_t *len). *len (if len is not NULL) always receives the length of the
 *   full string, without its terminating NUL. When cap > *len the string and a
 *   NUL are written and the call succeeds; otherwise nothing is written and the
 *   call returns PK_E_BUFFER, so a caller may pass (NULL, 0, &len) to ask for
 *   the size first.
 * - Numbers that may exceed 64 bits (candidates, cofactors, factors) are
 *   canonical decimal strings: ^(0|[1-9][0-9]*)$. Trial divisors always fit in
 *   64 bits and are plain uint64_t.
 * - The kernel never starts threads, never prints, never touches errno or
 *   global state, and never aborts on bad input.
 * - Thread safety is stated per function. A pk_job may be used by one thread
 *   at a time; only pk_job_interrupt() and pk_job_conclude() may be called
 *   concurrently with the other functions. Distinct jobs are fully
 *   independent.
 */
#ifndef PRIMEKIT_H
#define PRIMEKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(PK_BUILDING_DLL)
#  define PK_API __declspec(dllexport)
#elif defined(__GNUC__) || defined(__clang__)
#  define PK_API __attribute__((visibility("default")))
#else
#  define PK_API
#endif

/* ---------------------------------------------------------------- version */

#define PK_VERSION_MAJOR 0
#define PK_VERSION_MINOR 1
#define PK_VERSION_PATCH 0
/* MAJOR * 10000 + MINOR * 100 + PATCH, e.g. 100 for 0.1.0. */
#define PK_VERSION_NUMBER (PK_VERSION_MAJOR * 10000 + PK_VERSION_MINOR * 100 + PK_VERSION_PATCH)

/*
 * pk_version_number — the version of the library actually linked.
 * Returns PK_VERSION_NUMBER of the library build, which may differ from the
 * header a program was compiled against. Thread-safe.
 */
PK_API unsigned pk_version_number(void);

/*
 * pk_version_string — the linked library's version as "MAJOR.MINOR.PATCH".
 * Returns a static string; do not free it. Thread-safe.
 */
PK_API const char *pk_version_string(void);

/* ----------------------------------------------------------------- status */

typedef enum pk_status {
    PK_OK = 0,              /* success */
    PK_MORE = 1,            /* pk_job_step: the budget was spent, work remains */
    PK_DONE = 2,            /* pk_job_step: the job is finished */
    PK_INTERRUPTED = 3,     /* pk_job_step: stopped early by pk_job_interrupt */

    PK_E_ARG = -1,          /* a required pointer was NULL, or a size field was wrong */
    PK_E_PARSE = -2,        /* the candidate is not a canonical decimal string */
    PK_E_RANGE = -3,        /* the candidate is below 2 */
    PK_E_TOO_LARGE = -4,    /* the candidate has more digits than the limit */
    PK_E_OPTIONS = -5,      /* an option is malformed or out of range (from > bound, ...) */
    PK_E_NOMEM = -6,        /* memory could not be allocated; the job is unchanged */
    PK_E_BUFFER = -7,       /* the caller's buffer is too small; the needed length was reported */
    PK_E_NOT_DONE = -8,     /* the answer asked for needs a finished job */
    PK_E_INCOMPLETE = -9,   /* the factorization is not complete (divisors need it) */
    PK_E_TOO_MANY = -10,    /* more divisors than the caller allowed */
    PK_E_INDEX = -11,       /* an index is out of range */
    PK_E_CHECKPOINT = -12,  /* a checkpoint is malformed, truncated or fails its checksum */
    PK_E_CHECKPOINT_VERSION = -13, /* a checkpoint of an unknown format version */
    PK_E_CHECKPOINT_STATE = -14,   /* a well-formed checkpoint whose contents contradict
                                      each other (factors x cofactor != candidate, ...) */
    PK_E_INTERNAL = -15,    /* an internal invariant failed; please report it */
    PK_E_IO = -16,          /* a file could not be opened, read or written */
    PK_E_CACHE_FILE = -17   /* a cache file is truncated, fails its checksum, or has another
                               format version or layout; rebuild it (pk_cache_save) */
} pk_status;

/*
 * pk_status_name — the enumerator's name, e.g. "PK_E_PARSE".
 * Returns a static string ("PK_UNKNOWN_STATUS" for a value that is not a
 * pk_status). Thread-safe.
 */
PK_API const char *pk_status_name(int status);

/*
 * pk_status_message — a short English sentence describing the status, e.g.
 * "candidate is not a canonical decimal integer". Returns a static string.
 * Thread-safe.
 */
PK_API const char *pk_status_message(int status);

/* ---------------------------------------------------------------- options */

/* Which divisibility-test implementation the 64/128-bit paths use. */
typedef enum pk_simd {
    PK_SIMD_AUTO = 0,       /* best the CPU supports (or PRIMEKIT_SIMD in the environment
                               of pk_options_init's caller: portable, avx2, avx512) */
    PK_SIMD_PORTABLE = 1,   /* plain C, any CPU */
    PK_SIMD_AVX2 = 2,       /* x86-64 AVX2 + FMA */
    PK_SIMD_AVX512 = 3      /* x86-64 AVX-512F + DQ */
} pk_simd;

/* Defaults. */
#define PK_DEFAULT_MAX_DIGITS 10000000u   /* longest candidate accepted */
#define PK_DEFAULT_BPSW_DIGITS 2000u      /* longest remainder classified by BPSW */
#define PK_DEFAULT_BOUND_CAP 4294967296u  /* default bound: floor(sqrt(n)), at most 2^32 */

/*
 * Options for pk_job_create and pk_job_restore. Always initialise with
 * pk_options_init(); fields added in later versions go at the end and the
 * size field tells the library which ones the caller knows.
 */
typedef struct pk_options {
    size_t size;            /* sizeof(pk_options), set by pk_options_init */
    const char *from;       /* first divisor to try, decimal; NULL, "0" and "1" mean "2" */
    const char *bound;      /* last divisor to try (inclusive), decimal; NULL means
                               floor(sqrt(n)) capped at 2^32. Values above 2^64-65536
                               (strings of any length) are treated as 2^64-65536:
                               trial division never gets that far. When the range
                               starts at 2 the bound also shrinks on its own to
                               floor(sqrt(cofactor)) as factors are divided out;
                               a range starting above 2 tries every divisor up to
                               min(bound, cofactor), since primes below the range
                               may still divide the cofactor. */
    size_t max_digits;      /* candidates longer than this are PK_E_TOO_LARGE */
    size_t bpsw_digits;     /* a remainder left above the bound, above 2^64, with at most
                               this many digits is classified by BPSW; longer ones are
                               "unknown". Remainders below 2^64 are always classified
                               (and proven). */
    int simd;               /* a pk_simd value */
    struct pk_cache *cache; /* NULL, or a cache of prime products shared by jobs
                               (see pk_cache_create); it must outlive the job */
    /* Fields below were added with complete factorization; pk_options_init
       sets them to the defaults (0). */
    int mode;               /* a pk_mode value. A from or bound given makes a job
                               PK_MODE_TRIAL whatever this field says. */
    unsigned ecm_digits;    /* effort limit of a complete job: 0 (no limit), or stop
                               splitting a composite part above 128 bits once the
                               ECM curves expected to find a factor of this many
                               decimal digits are done (levels 15, 20, ..., 70; other
                               values are rounded up to the next level, above 70 is
                               PK_E_OPTIONS) */
    uint64_t work_limit;    /* effort limit of a complete job: 0 (no limit), or stop
                               once the stages after trial division have done this
                               many units of work (see pk_job_step) */
} pk_options;

/* What a job computes. */
typedef enum pk_mode {
    PK_MODE_COMPLETE = 0,   /* the default: every prime factor with its exponent. Trial
                               division to a small bound, then for each composite part
                               perfect powers, primality and splitting (see
                               docs/kernel.md), until every part is prime or an effort
                               limit is reached */
    PK_MODE_TRIAL = 1       /* trial division over [from, bound] only; the remainder is
                               classified (prime, probable prime, composite, unknown) */
} pk_mode;

/* ------------------------------------------------------------------ cache */

/*
 * A cache of products of sieved primes, used on the GMP path (candidates
 * above 2^128 with many digits) so that jobs after the first skip rebuilding
 * them: a later job over the same primes takes the products it finds cached
 * (docs/kernel.md has the measured gain). Entries are immutable once
 * published; the cache is safe to share
 * between jobs stepped concurrently on different threads.
 */
typedef struct pk_cache pk_cache;

/*
 * pk_cache_create — make an empty cache.
 * max_bytes  memory the cache may use for products (0: 64 MiB). Segments past
 *            the limit are computed per job and not kept.
 * out        receives the cache; NULL on error.
 * Returns PK_OK, PK_E_ARG or PK_E_NOMEM. Thread-safe.
 */
PK_API int pk_cache_create(size_t max_bytes, pk_cache **out);

/*
 * pk_cache_destroy — free a cache. NULL is a no-op. No job may still use it.
 */
PK_API void pk_cache_destroy(pk_cache *cache);

/*
 * pk_cache_save — write the cache's products to a file, so that another
 * process (pk_cache_load) skips building them. First, sibling products both
 * in the cache are multiplied into their parent (kept in the cache too, if
 * it has room), so later jobs check fewer, larger products; then the largest
 * products are written (about 1.8 MB for every prime below 10^7), with a
 * header (format version, segment layout, length) and a checksum over every
 * byte. The file is written under a temporary name next to path, flushed to
 * disk and renamed over path: readers see the old file or the new one.
 * cache  the cache; jobs may use it meanwhile.
 * path   the file; its directory must exist.
 * Returns PK_OK, PK_E_ARG, PK_E_NOMEM or PK_E_IO (nothing is changed at path
 * then). Takes as long as the multiplications of the products it writes and the
 * write (docs/kernel.md has figures). Thread-safe.
 */
PK_API int pk_cache_save(pk_cache *cache, const char *path);

/*
 * pk_cache_load — add the products of a file written by pk_cache_save.
 * The whole file is checked first: its length, its checksum, its format
 * version and segment layout, and that each product's position and size are
 * plausible. A file that fails any check adds nothing, and the cache fills
 * as jobs run, as if there were no file. The checksum catches damage, not
 * forgery: the file must be as trusted as the program (the user's own cache
 * directory).
 * cache  the cache; jobs may use it meanwhile. Products already in the cache
 *        are kept; products past its memory limit are skipped.
 * path   the file.
 * Returns PK_OK, PK_E_ARG, PK_E_NOMEM, PK_E_IO (no such file, or it cannot
 * be read) or PK_E_CACHE_FILE (refused). Thread-safe.
 */
PK_API int pk_cache_load(pk_cache *cache, const char *path);

/*
 * pk_options_init — fill *options with the defaults and set options->size.
 * Reads the environment variable PRIMEKIT_SIMD ("portable", "avx2", "avx512",
 * "auto") to choose the simd field, so tests and benchmarks can force a path.
 * Thread-safe as long as the environment is not being modified.
 */
PK_API void pk_options_init(pk_options *options);

/*
 * pk_simd_active — the implementation a job created with options.simd =
 * requested would really use on this CPU and this build of the library.
 * PK_SIMD_AUTO resolves to the best one supported (the environment is not
 * read; pk_options_init does that); a path the CPU lacks falls back to the
 * best one below it (AVX-512 -> AVX2 -> portable). Non-x86-64 builds always
 * use PK_SIMD_PORTABLE.
 *
 * requested  a pk_simd value.
 *
 * Returns PK_SIMD_PORTABLE, PK_SIMD_AVX2 or PK_SIMD_AVX512, or PK_E_OPTIONS
 * when requested is not a pk_simd value. Thread-safe.
 */
PK_API int pk_simd_active(int requested);

/* -------------------------------------------------------------------- job */

/* A factoring job (complete, or trial division over a range: see pk_mode).
   Opaque; create with pk_job_create or pk_job_restore. */
typedef struct pk_job pk_job;

/*
 * pk_job_create — parse a candidate and prepare a job for it.
 *
 * candidate  NUL-terminated canonical decimal string (^(0|[1-9][0-9]*)$) of at
 *            most options->max_digits digits. Values below 2 are PK_E_RANGE.
 * options    NULL for the defaults, or a struct set up by pk_options_init.
 *            The divisor range [from, bound] lets one candidate be split into
 *            independent pieces (run anywhere) whose factors merge to the
 *            unsplit answer. A range that starts above 2 still reports only
 *            proven primes. An empty range (from above bound, or above the
 *            default bound √candidate capped at 2^32) is PK_E_OPTIONS.
 * out        receives the new job; set to NULL on error.
 *
 * Returns PK_OK, or PK_E_ARG, PK_E_PARSE, PK_E_RANGE, PK_E_TOO_LARGE,
 * PK_E_OPTIONS, PK_E_NOMEM.
 * Ownership: the caller owns *out and frees it with pk_job_destroy. The
 * candidate and option strings are copied; the caller keeps its own.
 * Thread-safe.
 */
PK_API int pk_job_create(const char *candidate, const pk_options *options, pk_job **out);

/*
 * pk_job_destroy — free a job and everything it owns. pk_job_destroy(NULL)
 * does nothing. The job must not be in use by another thread (including a
 * concurrent pk_job_interrupt).
 */
PK_API void pk_job_destroy(pk_job *job);

/*
 * pk_job_step — do at most `budget` units of work, then return.
 *
 * A unit of work is testing one trial divisor against one 64-bit word of the
 * current cofactor: a divisor costs 1 unit while the cofactor fits in 64 bits,
 * 2 units while it fits in 128 bits, and ceil(bits/64) units beyond. Units
 * are proportional to time within a few times on every path, so a caller can
 * calibrate a budget once and get slices of a steady length. The budget is
 * honoured in blocks: a step may overshoot it by at most one block (a few
 * thousand units on the 64/128-bit paths, one group of primes on the GMP
 * path). budget 0 does no work. The stages of a complete job after trial
 * division count in the same currency: about one modular multiplication of a
 * word-size part per unit, and for ECM on an L-limb part L²·28 units per bit
 * of a stage-1 chunk's scalar (docs/kernel.md); a stint of them (an ECM
 * stage 2 is one) may overshoot the budget.
 *
 * Returns PK_MORE (budget spent, work remains), PK_DONE (finished; further
 * calls return PK_DONE at once, even with an interrupt pending), PK_INTERRUPTED (pk_job_interrupt was seen;
 * the interrupt is consumed, the job is intact and the next step continues
 * exactly where this one stopped), or PK_E_ARG / PK_E_NOMEM (the job is left
 * at its last resume point and may be stepped again).
 *
 * Never blocks, prints, starts threads or allocates without bound.
 * Not thread-safe with other calls on the same job except pk_job_interrupt
 * and pk_job_conclude.
 */
PK_API int pk_job_step(pk_job *job, uint64_t budget);

/*
 * pk_job_interrupt — ask a running (or the next) pk_job_step of this job to
 * return PK_INTERRUPTED as soon as possible. The kernel polls the request
 * after a bounded amount of work, so how long it waits does not grow with
 * the range or the number of steps: every 65,536 candidates on the 64-bit
 * path and 32,768 on the 128-bit path; every group of ~2^17 limb operations
 * on the GMP word-product path; and before every stint on the GMP
 * window path (candidates of ~3,700 digits and more), where no stint
 * multiplies numbers of more than 16,384 limbs, fewer for shorter cofactors
 * (the few steps that still run in one call are listed in docs/kernel.md,
 * "Interrupt granularity"). On both GMP paths a sieve segment passes over
 * every sieve prime up to the square root of its divisors, so with divisors
 * far beyond 2^32 the wait grows with them. Complete jobs poll before every
 * stint of the later stages: a word-size split stint (at most 2^14 units),
 * a quadratic-sieve stint (at most 2^19 units), an ECM curve's set-up, a
 * chunk of its stage 1, or its stage 2 (one GMP-ECM call that cannot be
 * interrupted; it grows with B1 and the part's size). A step also polls
 * before any work, so a request already set returns at once. docs/kernel.md
 * has the measured latencies.
 *
 * Thread-safe and async-signal-safe (a lock-free atomic store). job must be
 * valid for the duration of the call.
 */
PK_API void pk_job_interrupt(pk_job *job);

/*
 * pk_job_conclude — ask a complete job to finish with what it has. At its
 * next poll (the places pk_job_interrupt is polled) the job stops trial
 * division and splitting for good; the current and following pk_job_step
 * calls run only the cheap checks that remain — a new part below 2^64 is
 * factored by the word-size unit (a short, bounded call), larger new parts
 * are tested for perfect powers and primality, so a prime part is listed as a prime —
 * and then return PK_DONE with the honest partial answer: the primes found,
 * and each composite part left with pk_job_part saying what was tried on it
 * (the trial range actually covered, curves, B1/B2, work, method). An open
 * GMP trial-division window whose product was not yet checked is dropped:
 * trial_bound then ends below it. A job that finishes on its own before the
 * poll gives its complete answer. The request is part of the job's state
 * from then on: a checkpoint taken after it restores as concluded. An
 * interrupt pending at the same time is left pending and does not delay it.
 *
 * Returns PK_OK (also on a finished job, which does not change), PK_E_ARG
 * (job is NULL), or PK_E_OPTIONS (a PK_MODE_TRIAL job: nothing changes; its
 * range is the answer it was asked for).
 *
 * Thread-safe and async-signal-safe (a lock-free atomic store), like
 * pk_job_interrupt; job must be valid for the duration of the call.
 */
PK_API int pk_job_conclude(pk_job *job);

/* --------------------------------------------------------------- progress */

/* Which arithmetic the job is using for its current cofactor. */
typedef enum pk_path {
    PK_PATH_U64 = 1,        /* cofactor < 2^64 */
    PK_PATH_U128 = 2,       /* cofactor < 2^128 */
    PK_PATH_GMP = 3         /* larger: GMP with primes from a segmented sieve */
} pk_path;

/* A snapshot of a job's progress. Transparent; set size before the call. */
typedef struct pk_progress {
    size_t size;              /* sizeof(pk_progress), set by the caller */
    double percent;           /* 0..100, never decreases (also across checkpoint and
                                 restore); it is 100 if and only if the job is done */
    uint64_t next_divisor;    /* every divisor below this has been tried */
    uint64_t divisors_tested; /* trial divisors tested so far */
    uint64_t work_done;       /* units of work done so far (see pk_job_step) */
    size_t factors_found;     /* distinct prime factors found so far */
    int done;                 /* 1 when the job is finished */
    int path;                 /* a pk_path value */
    /* Added with complete factorization. */
    const char *stage;        /* static name of the current stage: "trial", "power",
                                 "prime", "split" (word-size parts), "ecm", "qs"
                                 (quadratic sieve), "done" */
    double stage_fraction;    /* 0..1, never decreases while the stage and the part
                                 worked on stay the same (ECM: curves done of the
                                 current level's expected count) */
    size_t parts_left;        /* composite parts not yet resolved (complete mode) */
    /* Added with ECM positions; all 0 outside stage "ecm". */
    uint64_t ecm_curve;       /* the current curve's number within its B1 level, from 1 */
    uint64_t ecm_curves;      /* curves that level expects to find a factor of ecm_digits */
    uint64_t ecm_b1;          /* the level's stage 1 bound */
    unsigned ecm_digits;      /* the factor size (decimal digits) the level aims at */
} pk_progress;

/*
 * pk_job_progress — copy a snapshot of the job's progress into *out.
 * out->size must be set to sizeof(pk_progress) (or the size of an older,
 * smaller version of the struct). A larger size (a newer header) is accepted:
 * the fields this library knows are filled and out->size is set to their
 * extent. The same rule holds for pk_result. Returns PK_OK or PK_E_ARG.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_progress(const pk_job *job, pk_progress *out);

/* ---------------------------------------------------------------- results */

/* What is known about the part of the candidate left after trial division. */
typedef enum pk_cofactor_status {
    PK_COFACTOR_ONE = 0,            /* nothing is left: every prime factor is listed */
    PK_COFACTOR_PROBABLE_PRIME = 1, /* passes BPSW; above 2^64, so not proven */
    PK_COFACTOR_COMPOSITE = 2,      /* proven composite, its factors unknown */
    PK_COFACTOR_UNKNOWN = 3         /* longer than bpsw_digits: not classified */
} pk_cofactor_status;

/* isPrime: a tri-state. */
#define PK_PRIME_NO 0
#define PK_PRIME_YES 1
#define PK_PRIME_UNKNOWN (-1)

/* How a "prime" answer is known. */
typedef enum pk_certainty {
    PK_CERTAINTY_PROVEN = 0,
    PK_CERTAINTY_PROBABLE = 1
} pk_certainty;

/*
 * The answer of a finished job. Transparent; set size before the call.
 *
 * A trial-division job (PK_MODE_TRIAL) lists proven primes only; a complete
 * job lists every prime, each PROVEN or PROBABLE (pk_job_factor_certainty),
 * and a cofactor other than 1 only when an effort limit left composite parts
 * (status COMPOSITE; pk_job_part) or a part longer than bpsw_digits (status
 * UNKNOWN). For trial division: listed factors are proven primes. A remainder that trial division proves
 * prime (the next divisor passed its square root, with the range starting at
 * 2) is moved into the factors, leaving the cofactor 1. A remainder below
 * 2^64 that passes BPSW is proven prime too (no BPSW pseudoprime exists below
 * 2^64) and is also moved into the factors. Above 2^64 a BPSW pass is
 * "probable".
 */
typedef struct pk_result {
    size_t size;            /* sizeof(pk_result), set by the caller */
    size_t factor_count;    /* distinct prime factors, see pk_job_factor */
    size_t cofactor_digits; /* decimal length of the cofactor */
    int cofactor_status;    /* a pk_cofactor_status value */
    int complete;           /* 1 when every prime factor is known (status ONE or
                               PROBABLE_PRIME) */
    int is_prime;           /* PK_PRIME_YES, PK_PRIME_NO or PK_PRIME_UNKNOWN */
    int certainty;          /* PK_CERTAINTY_PROBABLE exactly when the answer rests on a
                               BPSW pass above 2^64 (cofactor status PROBABLE_PRIME);
                               PK_CERTAINTY_PROVEN otherwise, including incomplete
                               answers, which claim nothing probable. A complete
                               job's answer is PROBABLE exactly when a listed
                               factor is (see pk_job_factor_certainty) */
    /* Added with complete factorization. */
    size_t part_count;      /* parts a complete job left: composite ones at an
                               effort limit (status COMPOSITE), or longer than
                               bpsw_digits and untested (status UNKNOWN); 0 for
                               a complete answer. See pk_job_part */
} pk_result;

/*
 * pk_job_result — the answer of a finished job.
 * Returns PK_OK, PK_E_ARG, or PK_E_NOT_DONE before pk_job_step returned
 * PK_DONE. Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_result(const pk_job *job, pk_result *out);

/*
 * pk_job_factor — the index-th distinct prime factor found so far (ascending),
 * as decimal, and its exponent (the factor is divided out completely, so the
 * exponent is final as soon as the factor is listed). Works on a running job
 * too: factors found so far are listed.
 *
 * index     0 .. factor count - 1 (progress.factors_found or
 *           result.factor_count).
 * buf, cap, len  the caller-buffer convention (see the top of this header).
 * exponent  receives the exponent; may be NULL.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_INDEX, PK_E_BUFFER.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_factor(const pk_job *job, size_t index, char *buf, size_t cap,
                         size_t *len, uint64_t *exponent);

/*
 * pk_job_factor_certainty — how the index-th listed factor is known to be
 * prime: PK_CERTAINTY_PROVEN (trial division, or a deterministic test below
 * 2^64) or PK_CERTAINTY_PROBABLE (a BPSW pass above 2^64; only complete jobs
 * list such factors).
 * Returns PK_OK, PK_E_ARG, PK_E_INDEX.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_factor_certainty(const pk_job *job, size_t index, int *certainty);

/*
 * What a complete job tried on a composite part it left (effort limit).
 * Transparent; set size before the call.
 */
typedef struct pk_part_info {
    size_t size;            /* sizeof(pk_part_info), set by the caller */
    uint64_t exponent;      /* the part divides the candidate to this power */
    uint64_t trial_from;    /* no prime in [trial_from, trial_bound] divides it */
    uint64_t trial_bound;
    uint64_t work;          /* units of work spent splitting it */
    uint64_t curves;        /* ECM curves completed on it (every B1 together) */
    uint64_t b1;            /* B1 and B2 of the last completed curve (0: none) */
    uint64_t b2;
    unsigned ecm_digits;    /* largest level whose expected curves are all done: a
                               factor of that many digits would have been found
                               with probability about 1 - 1/e (0: no level done) */
    const char *method;     /* static name of the last splitting method used
                               ("split", "ecm", "qs", or "none") */
} pk_part_info;

/*
 * pk_job_part — the index-th part a finished complete job left
 * (ascending), as decimal in the caller-buffer convention, and what was
 * tried on it. The cofactor is the product of the parts to their exponents.
 *
 * index  0 .. result.part_count - 1.
 * info   receives what was tried (info->size set by the caller, as for
 *        pk_result); may be NULL.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_NOT_DONE, PK_E_INDEX, PK_E_BUFFER.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_part(const pk_job *job, size_t index, char *buf, size_t cap, size_t *len,
                       pk_part_info *info);

/*
 * pk_job_cofactor — the current cofactor (candidate divided by every factor
 * found so far) as decimal, in the caller-buffer convention.
 * Returns PK_OK, PK_E_ARG, PK_E_BUFFER, PK_E_NOMEM.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_cofactor(const pk_job *job, char *buf, size_t cap, size_t *len);

/*
 * pk_job_candidate — the candidate as decimal, in the caller-buffer convention.
 * Returns PK_OK, PK_E_ARG, PK_E_BUFFER, PK_E_NOMEM. Thread-safety as above.
 */
PK_API int pk_job_candidate(const pk_job *job, char *buf, size_t cap, size_t *len);

/*
 * pk_job_divisors — every divisor of the candidate, ascending, 1 and the
 * candidate included, as decimal numbers separated by single spaces, in the
 * caller-buffer convention. A probable-prime cofactor counts as a prime.
 *
 * max_count  the most divisors the caller accepts.
 * count      receives the number of divisors (SIZE_MAX if it does not fit),
 *            also when the call fails with PK_E_TOO_MANY or PK_E_BUFFER;
 *            may be NULL.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_NOT_DONE, PK_E_INCOMPLETE (the
 * factorization is not complete), PK_E_TOO_MANY, PK_E_BUFFER, PK_E_NOMEM.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_divisors(const pk_job *job, size_t max_count, char *buf, size_t cap,
                           size_t *len, size_t *count);

/*
 * pk_job_merge — combine finished jobs that ran pieces of one candidate's
 * divisor range into one finished job, as if the whole range had run at once.
 *
 * pieces  finished jobs (pk_job_step returned PK_DONE) for the same candidate
 *         whose ranges [from, bound], in any order and possibly overlapping,
 *         together form one interval without gaps.
 * count   number of pieces, at least 1.
 * out     receives a new finished job: range = the union, factors = the union
 *         of the pieces' factors, cofactor = candidate / their product, and the
 *         cofactor classified exactly as a single job over the union would.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_NOT_DONE (a piece is not finished),
 * PK_E_OPTIONS (different candidates, the ranges leave a gap, or a piece is
 * a complete job rather than trial division over a range),
 * PK_E_CHECKPOINT_STATE (the pieces contradict each other), PK_E_NOMEM.
 * Ownership: the pieces are not modified; the caller owns *out.
 * Thread-safe as long as no piece is being stepped concurrently.
 */
PK_API int pk_job_merge(pk_job *const *pieces, size_t count, pk_job **out);

/*
 * pk_job_range — the job's divisor range [from, bound] as its options
 * resolved it (the default bound is √candidate capped at 2^32) or as its
 * checkpoint recorded it. A limit (pk_job_limit) does not change it.
 * Returns PK_OK or PK_E_ARG. Not thread-safe with a concurrent pk_job_step on
 * the same job.
 */
PK_API int pk_job_range(const pk_job *job, uint64_t *from, uint64_t *bound);

/*
 * pk_job_limit — tell a job that no divisor above `limit` needs trying: it
 * ends (PK_DONE at its next step) once every divisor up to min(limit, bound)
 * has been tried, at once when that is below its next divisor. A limit only
 * lowers: one above an earlier limit is ignored.
 *
 * Meant for the pieces of one candidate's split range: once the factors found
 * by all pieces leave a cofactor c, a range starting at 2 needs no divisor
 * above floor(√c), and any range none above c (see pk_cofactor_root). Pieces
 * stopped that way still merge (pk_job_merge) to the answer of one job over
 * the whole range, provided every limit was computed that way.
 *
 * The limit lives in memory only: a checkpoint records the range, so a
 * restored job tries all of it unless limited again.
 * Returns PK_OK or PK_E_ARG. Not thread-safe with a concurrent pk_job_step on
 * the same job.
 */
PK_API int pk_job_limit(pk_job *job, uint64_t limit);

/*
 * pk_job_ecm_share — one of `count` cooperating shares of a complete job's
 * ECM curves, so that several threads or processes run the curves of one
 * composite part at once.
 *
 * job    a complete job (not done, not a share) whose next stint is an ECM
 *        stint: progress stage "ecm". It is not modified.
 * index, count  0 <= index < count, count >= 2. The share runs curves
 *        c + index, c + index + count, c + index + 2·count, ... of the part
 *        (c: the job's current curve, which share 0 continues where the job
 *        stands), at the bounds one job would use for them, so the shares
 *        together run exactly the curves the job would run.
 * out    receives the share, an ordinary job for pk_job_step, pk_job_interrupt,
 *        pk_job_conclude, pk_job_progress and pk_job_checkpoint/pk_job_restore
 *        (checkpoint format version 3). pk_job_step returns PK_DONE once the
 *        share is over: it found a factor of the part (pk_job_ecm_share_info),
 *        its curves of the part's ECM pass are done (the ECM level limit, or
 *        the quadratic sieve's turn), it spent its part of the work limit
 *        (work_limit minus the work done, divided by count, rounded up), or it
 *        was concluded. A share never reports results (PK_E_NOT_DONE): merge.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_OPTIONS (not a complete job in ECM), PK_E_NOMEM.
 * Not thread-safe with a concurrent pk_job_step on job.
 */
PK_API int pk_job_ecm_share(const pk_job *job, unsigned index, unsigned count, pk_job **out);

/*
 * pk_job_ecm_share_info — a share's index and count, and found = 1 once it
 * found a factor (the other shares may then be interrupted and merged).
 * Any pointer but job may be NULL. Returns PK_OK, PK_E_ARG, PK_E_OPTIONS (job
 * is not a share). Not thread-safe with a concurrent pk_job_step on the job.
 */
PK_API int pk_job_ecm_share_info(const pk_job *job, unsigned *index, unsigned *count, int *found);

/*
 * pk_job_ecm_merge — the job the shares stand for, continued: its work and
 * ECM curves are the sums over the shares; when a share found a factor, the
 * part is split on the factor of the lowest-numbered curve among them (the
 * others' unfinished curves are dropped) and the job goes on with the new
 * parts; otherwise the part's ECM pass is over and the job goes on as one
 * job would (quadratic sieve, or the part left by an effort limit).
 *
 * shares  every share of one pk_job_ecm_share call set (count of them, each
 *         index once, in any order); either one found a factor (the others
 *         may stand anywhere, interrupted), or all are over (PK_DONE).
 * out     receives a new job (not a share); the shares are not modified.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_OPTIONS (not shares, of different jobs or
 * parts, a different count, an index missing or twice), PK_E_NOT_DONE (no
 * factor found and a share not over), PK_E_NOMEM. Nothing is changed on an
 * error. Thread-safe as long as no share is being stepped concurrently.
 */
PK_API int pk_job_ecm_merge(pk_job *const *shares, size_t count, pk_job **out);

/*
 * pk_cofactor_root — the cofactor c = candidate / Π primes[i]^exponents[i]
 * and its integer square root, each capped at UINT64_MAX.
 *
 * candidate  canonical decimal, at least 2.
 * primes, exponents  count prime powers (decimal, each at least 2) that divide
 *            the candidate together; NULL when count is 0.
 * root, cofactor  receive floor(√c) and c; either may be NULL.
 *
 * Returns PK_OK, PK_E_ARG, PK_E_PARSE (a number is not canonical decimal),
 * PK_E_RANGE (candidate below 2), PK_E_OPTIONS (the powers do not divide the
 * candidate). Thread-safe.
 */
PK_API int pk_cofactor_root(const char *candidate, const char *const *primes, const uint64_t *exponents,
                            size_t count, uint64_t *root, uint64_t *cofactor);

/* -------------------------------------------------------- small candidates */

/* No number below 2^32 has more distinct prime factors (2·3·5·…·23). */
#define PK_SMALL_MAX_FACTORS 9

/*
 * The answer for a candidate below 2^32. Transparent; set size before the
 * call. It is the answer a job with default options reports for the same
 * candidate: every prime factor (ascending, each proven), cofactor 1, status
 * PK_COFACTOR_ONE, complete, certainty PK_CERTAINTY_PROVEN; the candidate is
 * prime exactly when it has one factor with exponent 1.
 */
typedef struct pk_small_answer {
    size_t size;                              /* sizeof(pk_small_answer) */
    uint32_t n;                               /* the candidate */
    size_t factor_count;                      /* distinct prime factors */
    uint32_t primes[PK_SMALL_MAX_FACTORS];    /* ascending */
    uint32_t exponents[PK_SMALL_MAX_FACTORS];
    uint32_t divisors_tested;                 /* trial divisors tried: 2, then the odd primes */
    uint32_t next_divisor;                    /* the first prime not tried (every prime below it was) */
} pk_small_answer;

/*
 * pk_small_factor — factor 2 <= n < 2^32 completely in one call, with no
 * allocation (at most 6,542 trial divisors, the primes below 2^16, for a prime
 * near 2^32; the first call sieves them once).
 * Meant for the many tiny candidates for which a job's setup would cost more
 * than the answer. Returns PK_OK, or PK_E_ARG (n < 2, out NULL or too small).
 * Thread-safe.
 */
PK_API int pk_small_factor(uint32_t n, pk_small_answer *out);

/*
 * pk_small_divisors — every divisor of answer->n, ascending, as pk_job_divisors
 * writes them ("1 2 3 6"), in the caller-buffer convention; count receives
 * their number (may be NULL). Allocates nothing unless n has more than 384
 * divisors. Returns PK_OK, PK_E_ARG, PK_E_TOO_MANY (more than max_count),
 * PK_E_BUFFER, PK_E_NOMEM. Thread-safe.
 */
PK_API int pk_small_divisors(const pk_small_answer *answer, size_t max_count, char *buf, size_t cap,
                             size_t *len, size_t *count);

/* ------------------------------------------------- many word-size numbers */

/* No number below 2^64 has more distinct prime factors (2·3·5·…·47), nor below 2^128 (2·3·…·103). */
#define PK_U64_MAX_FACTORS 15
#define PK_U128_MAX_FACTORS 27

/*
 * The complete factorization of one number below 2^64, as pk_factor_u64_array
 * writes it. Transparent. Every prime is proven (a test with no exception
 * below 2^64); primes ascend; the product of primes[i]^exponents[i] is n.
 */
typedef struct pk_u64_answer {
    size_t size;                               /* sizeof(pk_u64_answer), written by the call */
    uint64_t n;                                /* the number */
    uint32_t factor_count;                     /* distinct prime factors */
    uint8_t exponents[PK_U64_MAX_FACTORS];
    uint64_t primes[PK_U64_MAX_FACTORS];       /* ascending */
} pk_u64_answer;

/*
 * pk_factor_u64_array — factor count numbers, each 2 <= n < 2^64, completely:
 * answers[i] receives the factorization of numbers[i]. Trial division, then
 * Pollard-Brent rho or elliptic curves in Montgomery arithmetic; no
 * allocation. answer_size must be sizeof(pk_u64_answer). Every number is
 * checked first: on an error nothing is written.
 * Returns PK_OK, PK_E_ARG (a NULL array with count > 0, a wrong answer_size)
 * or PK_E_RANGE (a number below 2). Thread-safe.
 */
PK_API int pk_factor_u64_array(const uint64_t *numbers, size_t count, pk_u64_answer *answers,
                               size_t answer_size);

/* A number below 2^128 as two 64-bit halves: hi · 2^64 + lo. */
typedef struct pk_uint128 {
    uint64_t lo;
    uint64_t hi;
} pk_uint128;

/*
 * The complete factorization of one number below 2^128. Transparent. Primes
 * ascend; primes below 2^64 are proven (certainty PK_CERTAINTY_PROVEN), primes
 * above pass a BPSW test (PK_CERTAINTY_PROBABLE; no counterexample is known);
 * probable_count counts the latter.
 */
typedef struct pk_u128_answer {
    size_t size;                                 /* sizeof(pk_u128_answer), written by the call */
    pk_uint128 n;                                /* the number */
    uint32_t factor_count;                       /* distinct prime factors */
    uint32_t probable_count;                     /* of them, probable primes (at most one) */
    pk_uint128 primes[PK_U128_MAX_FACTORS];      /* ascending */
    uint8_t exponents[PK_U128_MAX_FACTORS];
    uint8_t certainty[PK_U128_MAX_FACTORS];      /* a pk_certainty value per prime */
} pk_u128_answer;

/*
 * pk_factor_u128_array — factor count numbers, each 2 <= n < 2^128,
 * completely, as pk_factor_u64_array does; above 2^64 a composite part is
 * split by rho and elliptic curves in two-word Montgomery arithmetic, and a
 * part of 80 bits or more that a short pass of those leaves whole by the
 * quadratic sieve, as in a job. No allocation below 80 bits; the sieve
 * allocates its tables for each part it takes. answer_size must be
 * sizeof(pk_u128_answer); on an error nothing is written.
 * Returns PK_OK, PK_E_ARG or PK_E_RANGE (a number below 2). Thread-safe.
 */
PK_API int pk_factor_u128_array(const pk_uint128 *numbers, size_t count, pk_u128_answer *answers,
                                size_t answer_size);

/* ------------------------------------------------------------- checkpoint */

/*
 * pk_job_checkpoint — write the job's resumable state as portable, versioned
 * text (ASCII lines: format version, candidate, range, limits, next divisor,
 * work done, factors found, cofactor, for a complete job its stage, parts and
 * the current split's state (format version 2; trial-division jobs write
 * version 1), and a checksum line), in the
 * caller-buffer convention. The text restores to the same job in any process
 * on any machine. Call it between steps (for example after PK_INTERRUPTED).
 *
 * Returns PK_OK, PK_E_ARG, PK_E_BUFFER, PK_E_NOMEM.
 * Not thread-safe with a concurrent pk_job_step on the same job.
 */
PK_API int pk_job_checkpoint(const pk_job *job, char *buf, size_t cap, size_t *len);

/*
 * pk_job_restore — rebuild a job from checkpoint text.
 *
 * text, length  the checkpoint (need not be NUL-terminated).
 * options       NULL or pk_options_init'ed: only max_digits and simd are used;
 *               the range, the mode, the effort limits and the BPSW limit come
 *               from the checkpoint. Versions 1, 2 and 3 are read (version 1
 *               as a trial-division job, version 3 as an ECM share).
 * out           receives the job; NULL on error.
 *
 * Returns PK_OK; PK_E_CHECKPOINT (malformed, truncated, bad checksum),
 * PK_E_CHECKPOINT_VERSION (unknown format version), PK_E_CHECKPOINT_STATE
 * (factors x cofactor != candidate, a next divisor outside the range, a
 * listed factor that is not prime, ...), PK_E_TOO_LARGE, PK_E_ARG,
 * PK_E_NOMEM. Never crashes on any input.
 * Thread-safe.
 */
PK_API int pk_job_restore(const char *text, size_t length, const pk_options *options,
                          pk_job **out);

/* ---------------------------------------------------------- range factoring */

/*
 * Factoring every number of a range [first, last] (2 <= first <= last <
 * 2^64) by a segmented sieve: each prime up to sqrt(last) is divided out of
 * the multiples it has in a segment, and what is left above 1 is prime (for
 * short ranges of large numbers the sieve may stop lower and prove the
 * leftovers with the deterministic test below 2^64 instead). Every factor is
 * proven. A handle delivers the range in order, one segment per step, and
 * keeps no answers beyond the last segment. Ranges reaching 2^64 or beyond
 * cannot be expressed here: such numbers go to pk_job_create one by one.
 */
typedef struct pk_range pk_range;

/* The longest line pk_range_format writes, "\n" included. */
#define PK_RANGE_LINE_MAX 192u

/*
 * pk_range_create — prepare a handle for [first, last]. Allocates the tables
 * (a few MB; more only for ranges whose sieve primes are many); the sieve's
 * set-up is done by the first steps.
 * Returns PK_OK, PK_E_ARG (out NULL), PK_E_RANGE (first < 2), PK_E_OPTIONS
 * (first > last), PK_E_NOMEM; *out is NULL on error. Thread-safe.
 */
PK_API int pk_range_create(uint64_t first, uint64_t last, pk_range **out);

/* pk_range_destroy — free the handle; NULL does nothing. Not while in use. */
PK_API void pk_range_destroy(pk_range *range);

/*
 * pk_range_step — do at most about `budget` units of work: one unit is one
 * number of the range sieved, or one number of the set-up's prime sieve. A
 * step delivers at most one segment (up to 8,192 numbers; a segment is
 * never cut, so a step may overshoot by one segment); the previous
 * segment's answers are gone once the next step starts. budget 0 does no
 * work. Polls pk_range_interrupt before each set-up chunk and each segment,
 * and every 256 numbers while a segment's leftover cofactors are proven (a
 * segment cut there is taken up again by the next step).
 *
 * Returns PK_MORE (numbers remain; pk_range_segment says whether this step
 * delivered some), PK_DONE (the last segment was delivered by this or an
 * earlier step; later calls deliver nothing), PK_INTERRUPTED (the request
 * is consumed; nothing was delivered; the next step goes on from there),
 * PK_E_ARG, PK_E_NOMEM (nothing delivered; the handle may be stepped again).
 * Never prints, never starts threads. Not thread-safe on the same handle
 * except with pk_range_interrupt.
 */
PK_API int pk_range_step(pk_range *range, uint64_t budget);

/*
 * pk_range_interrupt — make the running or the next pk_range_step return
 * PK_INTERRUPTED at its next poll (polls are at most one set-up chunk, one
 * segment's sieve or 256 primality tests apart; docs/kernel.md has the
 * measured latency).
 * Thread-safe and async-signal-safe (a lock-free atomic store).
 */
PK_API void pk_range_interrupt(pk_range *range);

/*
 * pk_range_segment — the segment the last step delivered: its first number
 * and its count (0 when the last step delivered nothing). Either pointer may
 * be NULL. Returns PK_OK or PK_E_ARG.
 */
PK_API int pk_range_segment(const pk_range *range, uint64_t *first, size_t *count);

/*
 * pk_range_answers — copy the factorizations of the delivered segment's
 * numbers index .. index + count - 1 into answers (primes ascending, each
 * proven, product = n). answer_size must be sizeof(pk_u64_answer).
 * Returns PK_OK, PK_E_ARG, PK_E_INDEX (beyond the segment; nothing written).
 */
PK_API int pk_range_answers(const pk_range *range, size_t index, size_t count, pk_u64_answer *answers,
                            size_t answer_size);

/*
 * pk_range_format — write the delivered segment's lines from number `index`
 * on, as the coreutils factor program prints them ("12: 2 2 3\n": a prime
 * is repeated for its exponent), whole lines only, as many as fit in cap
 * bytes (no NUL is written). *len receives the bytes written and *lines the
 * lines written (either may be NULL).
 * Returns PK_OK (every line to the end of the segment was written), PK_MORE
 * (the buffer filled first: call again from index + *lines), PK_E_BUFFER (not
 * even one line fits; a cap of PK_RANGE_LINE_MAX always fits one),
 * PK_E_ARG, PK_E_INDEX (index beyond the segment).
 */
PK_API int pk_range_format(const pk_range *range, size_t index, char *buf, size_t cap, size_t *len,
                           size_t *lines);

/* Progress of a range. Transparent; set size before the call. */
typedef struct pk_range_progress {
    size_t size;        /* sizeof(pk_range_progress), set by the caller */
    uint64_t first, last;
    uint64_t done;      /* numbers delivered (the next one is first + done) */
    uint64_t total;     /* last - first + 1 */
    uint64_t limit;     /* the sieve's largest prime bound */
} pk_range_progress;

/* pk_range_progress_of — fill out. Returns PK_OK or PK_E_ARG. */
PK_API int pk_range_progress_of(const pk_range *range, pk_range_progress *out);

/*
 * pk_range_checkpoint — the handle's position as text, in the caller-buffer
 * convention: "primekit-range 1", first, last, done (numbers delivered) and
 * a checksum line. Delivered segments count as done: write their lines out
 * before checkpointing. Returns PK_OK, PK_E_ARG, PK_E_BUFFER.
 * Not thread-safe with a concurrent step on the same handle.
 */
PK_API int pk_range_checkpoint(const pk_range *range, char *buf, size_t cap, size_t *len);

/*
 * pk_range_restore — a new handle from checkpoint text (need not be
 * NUL-terminated); its first step goes on at the saved position.
 * Returns PK_OK, PK_E_ARG, PK_E_CHECKPOINT (malformed, truncated, bad
 * checksum), PK_E_CHECKPOINT_VERSION, PK_E_CHECKPOINT_STATE (a position
 * outside the range), PK_E_NOMEM. Never crashes on any input. Thread-safe.
 */
PK_API int pk_range_restore(const char *text, size_t length, pk_range **out);

/*
 * pk_range_seek — move the handle so that its first `done` numbers count as
 * delivered: the next step begins at first + done (and builds its set-up
 * there again), as a handle restored from a checkpoint at that position
 * would. Returns PK_OK, PK_E_ARG, PK_E_OPTIONS (done above the count of
 * numbers; nothing changed). Not thread-safe with a concurrent step on the
 * same handle.
 */
PK_API int pk_range_seek(pk_range *range, uint64_t done);

/*
 * pk_range_split — the index-th of `parts` contiguous sub-ranges of [first,
 * last], as equal as can be (the first (count mod parts) get one more).
 * Sub-ranges are independent: give each to its own handle and thread, and
 * concatenate their lines in index order. Returns PK_OK, PK_E_ARG (a NULL
 * pointer, parts 0), PK_E_RANGE (first < 2), PK_E_OPTIONS (first > last, or
 * parts above the count of numbers), PK_E_INDEX (index >= parts). Thread-safe.
 */
PK_API int pk_range_split(uint64_t first, uint64_t last, uint64_t parts, uint64_t index, uint64_t *sub_first,
                          uint64_t *sub_last);

#ifdef __cplusplus
}
#endif

#endif /* PRIMEKIT_H */
