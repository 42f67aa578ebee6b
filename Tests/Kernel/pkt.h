/*
 * pkt.h — the small test harness shared by the PrimeKit C tests.
 *
 * Tests use only the public header <primekit.h>, libc, pthreads and GMP (GMP
 * is the oracle: primality, products, divisibility). Each test is a function
 * named after the behaviour it checks; the runner executes each one in its own
 * child process (so a crash in the kernel fails one test, not the run), prints
 * "ok" or "FAIL" per test and ends with "N passed, N failed".
 */
#ifndef PKT_H
#define PKT_H

/* The tests read and set job fields that only the tests' kernel has (see
   bindings/c/Makefile): both must be built with the test hooks. */
#ifndef PK_TEST_HOOKS
#error "the kernel tests are built with -DPK_TEST_HOOKS, against a kernel built the same way"
#endif

#include <stddef.h>
#include <stdint.h>
#include <gmp.h>
#include <primekit.h>

/* ------------------------------------------------------------- reporting */

void pkt_fail_at(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void pkt_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int pkt_failures(void);

#define PKT_CHECK(cond, ...)                                   \
    do {                                                       \
        if (!(cond)) pkt_fail_at(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

/* Check a status code; prints both names on mismatch. */
#define PKT_CHECK_STATUS(got, want, what)                                          \
    do {                                                                           \
        int pkt_g_ = (got), pkt_w_ = (want);                                       \
        if (pkt_g_ != pkt_w_)                                                      \
            pkt_fail_at(__FILE__, __LINE__, "%s: got %s (%d), want %s (%d)", (what), \
                        pk_status_name(pkt_g_), pkt_g_, pk_status_name(pkt_w_), pkt_w_); \
    } while (0)

/* Stop the current test early when too many checks failed already. */
#define PKT_BAIL_IF_MANY() do { if (pkt_failures() >= 2000) return; } while (0)

/* True in the sanitizer build: tests shrink their sizes and say so. */
#if defined(__SANITIZE_ADDRESS__)
#  define PKT_SANITIZED 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define PKT_SANITIZED 1
#  endif
#endif
#ifndef PKT_SANITIZED
#  define PKT_SANITIZED 0
#endif

/* Pick a size: the full one normally, a smaller one under sanitizers. */
#define PKT_SIZE(full, sanitized) (PKT_SANITIZED ? (sanitized) : (full))

/* ------------------------------------------------------------ randomness */

typedef struct pkt_rng { uint64_t s[4]; } pkt_rng;

/* A generator derived from the run's seed and a per-test label. */
void pkt_rng_for(pkt_rng *rng, const char *label);
uint64_t pkt_rand(pkt_rng *rng);
uint64_t pkt_rand_below(pkt_rng *rng, uint64_t n);          /* uniform in [0, n) */
uint64_t pkt_rand_range(pkt_rng *rng, uint64_t lo, uint64_t hi); /* [lo, hi] */

/* FNV-1a 64 of n bytes, the hash a checkpoint's checksum line holds; the
   tests' own copy, so that they check the kernel's rather than reuse it. */
uint64_t pkt_fnv1a64(const void *bytes, size_t n);
void pkt_rand_bits(pkt_rng *rng, mpz_t out, unsigned bits); /* exactly `bits` bits */
void pkt_rand_prime(pkt_rng *rng, mpz_t out, unsigned bits); /* a prime of exactly `bits` bits */
uint64_t pkt_seed(void);

/* ------------------------------------------------------------- answers */

/* Everything a finished job answers, read through the public API. */
typedef struct pkt_answer {
    pk_result res;
    size_t nfactors;
    char **factors;       /* decimal */
    uint64_t *exponents;
    char *cofactor;       /* decimal */
} pkt_answer;

void pkt_answer_init(pkt_answer *a);
void pkt_answer_free(pkt_answer *a);
/* Read a finished job's answer; returns a pk status (PK_OK on success). */
int pkt_answer_read(const pk_job *job, pkt_answer *a);
/* Compare two answers; on difference write a reason into why and return 0. */
int pkt_answer_equal(const pkt_answer *a, const pkt_answer *b, char *why, size_t whycap);
/* A one-line rendering ("2^3 * 7 | cofactor 1 ONE prime=NO proven"). */
void pkt_answer_format(const pkt_answer *a, char *buf, size_t cap);

/* Factors found so far by a (possibly running) job: count, strings, exponents. */
int pkt_factors_read(const pk_job *job, size_t count, char ***factors, uint64_t **exponents);
void pkt_factors_free(size_t count, char **factors, uint64_t *exponents);

/* Fetch a string through the caller-buffer convention; returns malloc'd text or NULL. */
char *pkt_cofactor(const pk_job *job);
char *pkt_checkpoint(const pk_job *job, size_t *len);

/* Run a job to completion with the given step budget (UINT64_MAX for "all at
 * once"), checking progress invariants between steps. Returns the last
 * pk_job_step status (PK_DONE on success). max_steps guards against a kernel
 * that never finishes. */
int pkt_run(pk_job *job, uint64_t budget, uint64_t max_steps);

/* Step *job until a step returns anything but PK_MORE and PK_INTERRUPTED (or
 * max_steps steps were made; then PK_MORE). Before each step next_budget
 * (when not NULL) picks the budget, else `budget` is used; after each step,
 * after_step (when not NULL) sees the status and may replace *job (by a
 * restored copy, say) or interrupt it. The interrupt-and-restore loops of the
 * tests and their stepping loops all run through this. */
typedef struct pkt_drive {
    uint64_t budget;
    uint64_t (*next_budget)(void *ctx, uint64_t step);
    void (*after_step)(void *ctx, pk_job **job, int status);
    void *ctx;
    uint64_t max_steps;
} pkt_drive;
int pkt_drive_job(pk_job **job, const pkt_drive *d);

/* Checkpoint job and restore the text in a new job; on success destroy job
 * and return the new one, else return job (the failure is a test failure).
 * must_contain (may be NULL) must occur in the text; with same_text the new
 * job must checkpoint to the very same text. */
pk_job *pkt_restore_copy(pk_job *job, const char *what, const char *must_contain, int same_text);

/* Progress invariants between two snapshots of the same job's life. */
void pkt_check_progress_step(const pk_progress *before, const pk_progress *after, const char *what);
int pkt_progress(const pk_job *job, pk_progress *p);

/* Create (with optional range/limits) and run a job; returns its status.
 * from/bound may be NULL. bpsw_digits 0 means the default. */
int pkt_factor(const char *candidate, const char *from, const char *bound, size_t bpsw_digits,
               int simd, pkt_answer *out);

/* ----------------------------------------------------------------- oracle */

/* Primes below PKT_SIEVE_LIMIT, from a sieve computed in the test. */
#define PKT_SIEVE_LIMIT (1u << 22)
const uint32_t *pkt_small_primes(size_t *count);

/*
 * What a job over [2, bound] must answer for n, computed with GMP by
 * simulating trial division as the header specifies (factors divided out
 * completely, the bound shrinks to floor(sqrt(cofactor)), the remainder
 * classified) .
 *
 * bound     0 for the default (floor(sqrt(n)) capped at 2^32).
 * bpsw_digits the BPSW limit (0: PK_DEFAULT_BPSW_DIGITS).
 * hints     prime factors of n above PKT_SIEVE_LIMIT that trial division
 *           could reach (every prime factor of n in (PKT_SIEVE_LIMIT, bound]
 *           must be listed); may be NULL when bound <= PKT_SIEVE_LIMIT.
 * stop      receives min(bound, isqrt(final cofactor)): roughly the work done.
 */
void pkt_oracle(const mpz_t n, uint64_t bound, size_t bpsw_digits, const mpz_t *hints,
                size_t nhints, pkt_answer *out, uint64_t *stop);

/* The same over [from, bound]: valid when no composite in the range can
 * divide n (e.g. every prime factor of n is >= from). */
void pkt_oracle_range(const mpz_t n, uint64_t from, uint64_t bound, size_t bpsw_digits, const mpz_t *hints,
                      size_t nhints, pkt_answer *out, uint64_t *stop);
/* Classify the remainder c (n divided by the factors already in out) as a job
 * over [from, B] would, moving a proven prime into the factors; fills out->res. */
void pkt_oracle_finish(const mpz_t n, mpz_t c, uint64_t from, uint64_t B, size_t bpsw_digits, pkt_answer *out);

/* Check a job's answer for n against GMP facts alone: every factor is prime,
 * factors ascending, product x cofactor == n, cofactor status agrees with
 * GMP's primality test, derived fields consistent. Returns 1 when fine. */
int pkt_check_answer_facts(const mpz_t n, const pkt_answer *a, const char *what);

/* Planted candidates: n built from primes of chosen sizes. */
typedef struct pkt_planted {
    mpz_t n;
    size_t nprimes;
    mpz_t primes[16];   /* distinct primes (with multiplicity in exps) */
    unsigned exps[16];
} pkt_planted;
void pkt_planted_init(pkt_planted *p);
void pkt_planted_clear(pkt_planted *p);
/* n < 2^max_bits with bits >= min_bits, from small primes (up to small_bits
 * bits) and a tail of 0, 1 or 2 larger primes. */
void pkt_planted_make(pkt_rng *rng, pkt_planted *p, unsigned min_bits, unsigned max_bits,
                      unsigned small_bits);

/* Decimal string of an unsigned 64-bit value into a static-size buffer. */
void pkt_u64(uint64_t v, char buf[24]);

/* ----------------------------------------------------------------- tests */

#define PKT_TESTS(X)                                         \
    X(version_macros_match_linked_library)                   \
    X(status_names_and_messages_cover_every_code)            \
    X(create_rejects_bad_candidates_and_sets_out_to_null)    \
    X(create_rejects_bad_options)                            \
    X(destroy_null_is_a_no_op_and_null_job_is_an_arg_error)  \
    X(options_init_reads_primekit_simd_from_environment)     \
    X(caller_buffer_convention_reports_length_and_needs_room_for_nul) \
    X(results_need_a_finished_job)                           \
    X(kernel_never_prints_or_touches_errno)                  \
    X(plugin_examples_give_their_divisor_lists)              \
    X(divisors_match_brute_force_and_respect_max_count)      \
    X(every_n_below_a_million_matches_brute_force)           \
    X(random_64_bit_planted_factors_match_gmp)               \
    X(random_65_to_200_bit_planted_factors_match_gmp)        \
    X(carmichael_and_pseudoprime_remainders_are_composite)   \
    X(prime_powers_near_2_32_are_found_with_their_exponent)  \
    X(gmp_windows_above_2_32_find_planted_primes)            \
    X(numbers_around_2_64_and_2_128_match_gmp)               \
    X(remainder_above_bound_is_composite_prime_or_unknown)   \
    X(progress_never_decreases_and_is_100_when_done)         \
    X(step_budget_zero_does_no_work_and_small_budgets_finish) \
    X(interrupt_before_step_is_seen_then_consumed)           \
    X(range_starting_above_2_lists_only_fully_divided_primes) \
    X(split_ranges_merge_to_the_unsplit_answer)              \
    X(merge_rejects_unfinished_mismatched_and_gapped_pieces) \
    X(limited_pieces_merge_to_the_unsplit_answer)            \
    X(limit_only_lowers_and_cofactor_root_checks_its_input) \
    X(checkpoint_restore_round_trip_after_thread_interrupts) \
    X(checkpoint_restore_round_trip_after_signal_interrupts) \
    X(checkpoint_restore_round_trip_with_small_random_budgets) \
    X(checkpoint_of_fresh_and_finished_jobs_restores)        \
    X(large_candidate_round_trip_on_the_gmp_path)           \
    X(corrupted_checkpoints_are_rejected_never_crash)        \
    X(inconsistent_checkpoints_are_rejected_with_state_or_version) \
    X(checkpoint_status_must_be_the_one_the_job_concluded) \
    X(small_candidates_answer_as_jobs_do)                    \
    X(small_calls_reject_bad_arguments_and_follow_the_buffer_convention) \
    X(divisor_lists_match_a_square_root_scan)                \
    X(simd_active_reports_what_the_cpu_runs)                 \
    X(simd_paths_agree_on_random_inputs)                     \
    X(cache_shared_by_jobs_and_threads_changes_no_answer)   \
    X(cache_file_round_trips_and_damaged_files_are_refused) \
    X(gcd_in_stints_matches_mpz_gcd)                         \
    X(barrett_reduction_and_products_in_stints_match_gmp)    \
    X(interrupts_inside_window_work_resume_to_the_same_answer) \
    X(window_check_is_cut_into_bounded_stints)                \
    X(sieve_set_up_far_from_zero_yields_to_budget_and_interrupts)               \
    X(complete_factorizations_match_known_answers)           \
    X(m137_factors_completely)                               \
    X(complete_jobs_interrupted_at_random_polls_restore_to_the_same_answer) \
    X(v2_checkpoint_single_character_changes_are_refused_or_harmless) \
    X(effort_limits_give_the_partial_answer)                 \
    X(ecm_finds_the_20_to_22_digit_prime_of_60_digit_products) \
    X(a_range_or_trial_mode_keeps_trial_division_alone)     \
    X(conclude_in_trial_division_keeps_the_range_covered)    \
    X(conclude_during_splitting_leaves_each_part_with_its_record) \
    X(conclude_from_another_thread_while_stepping)           \
    X(conclude_survives_checkpoint_and_restore)              \
    X(ecm_stage_two_on_two_threads_at_once)                  \
    X(ecm_shares_stepped_in_turns_give_the_unsplit_answer)   \
    X(ecm_share_checkpoints_and_restores_mid_curve)          \
    X(ecm_merge_refuses_shares_that_do_not_belong_together)  \
    X(ecm_effort_limits_count_every_share)                   \
    X(ecm_share_checkpoint_changes_are_refused_or_restore)   \
    X(word_factor64_matches_brute_force_below_a_million)     \
    X(word_factor64_random_numbers_multiply_back_into_primes) \
    X(word_primality_agrees_with_gmp_and_known_pseudoprimes) \
    X(word_primality_base_sets_reject_strong_pseudoprimes_to_base_2) \
    X(word_balanced_64_bit_semiprimes_split_through_the_batch_call) \
    X(word_65_to_128_bit_semiprimes_and_numbers_factor_completely) \
    X(word_more_65_to_128_bit_semiprimes_and_numbers_factor_completely) \
    X(word_prime_powers_carmichael_numbers_and_edges_factor)  \
    X(word_batch_calls_reject_bad_arguments_and_write_nothing) \
    X(wsplit_interrupted_saved_and_resumed_finds_the_same_factor) \
    X(wsplit_load_refuses_every_single_character_change)      \
    X(qs_balanced_semiprimes_of_70_100_128_160_bits_split)     \
    X(qs_three_primes_and_square_times_prime_give_proper_factors) \
    X(qs_any_budget_cut_gives_the_same_factor_and_work)        \
    X(qs_jobs_interrupted_in_the_sieve_restore_to_the_same_answer) \
    X(range_every_n_below_a_million_matches_the_batch_call_and_its_lines) \
    X(range_random_ranges_near_1e12_1e18_and_2_64_match_the_batch_call) \
    X(range_seek_goes_on_from_any_position) \
    X(range_interrupted_at_random_polls_restores_to_the_same_lines) \
    X(range_checkpoint_single_character_changes_are_refused_or_harmless) \
    X(range_bad_arguments_are_refused_and_change_nothing) \
    X(range_split_pieces_concatenate_to_the_whole_range) \
    X(range_interrupts_from_another_thread_give_the_same_lines)

#define PKT_DECLARE(name) void test_##name(void);
PKT_TESTS(PKT_DECLARE)
#undef PKT_DECLARE

#endif /* PKT_H */
