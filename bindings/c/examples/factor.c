/*
 * factor.c — factor the numbers given on the command line with PrimeKit.
 *
 *   cc factor.c $(pkg-config --cflags --libs primekit)
 *   ./factor 600851475143 18446744073709551617
 *   600851475143: 71 839 1471 6857
 *   18446744073709551617: 274177 67280421310721
 *
 * Options: -b N tries divisors up to N only (default: up to sqrt(n), at
 * most 2^32). When trial division cannot finish the job, a second line says
 * what is known about the part that is left.
 *
 * Plain C99 over the public API: the job is advanced in slices with
 * pk_job_step, the way a program that wants to stay responsive would.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <primekit.h>

/* Fetch a string with the caller-buffer convention: ask the size, then read. */
static char *cofactor_text(const pk_job *job)
{
    size_t len = 0;
    char *buf;
    if (pk_job_cofactor(job, NULL, 0, &len) != PK_E_BUFFER) return NULL;
    buf = malloc(len + 1);
    if (buf && pk_job_cofactor(job, buf, len + 1, &len) != PK_OK) {
        free(buf);
        buf = NULL;
    }
    return buf;
}

static int factor_one(const char *n, const char *bound)
{
    pk_options options;
    pk_job *job = NULL;
    pk_result result;
    size_t i;
    int status;

    pk_options_init(&options);
    options.bound = bound;
    status = pk_job_create(n, &options, &job);
    if (status != PK_OK) {
        fprintf(stderr, "factor: %s: %s (%s)\n", n, pk_status_message(status), pk_status_name(status));
        return 1;
    }
    do status = pk_job_step(job, UINT64_C(1) << 26); /* a slice of a few milliseconds */
    while (status == PK_MORE);
    if (status != PK_DONE) {
        fprintf(stderr, "factor: %s: %s\n", n, pk_status_message(status));
        pk_job_destroy(job);
        return 1;
    }

    result.size = sizeof result;
    pk_job_result(job, &result);
    printf("%s:", n);
    for (i = 0; i < result.factor_count; i++) {
        char prime[4096];
        uint64_t exponent = 0, e;
        size_t len = 0;
        if (pk_job_factor(job, i, prime, sizeof prime, &len, &exponent) != PK_OK) {
            printf(" <factor %zu: %zu digits>", i, len);
            continue;
        }
        for (e = 0; e < exponent && e < 8; e++) printf(" %s", prime);
        if (exponent > 8) printf(" ... (%s^%" PRIu64 ")", prime, exponent);
    }
    if (result.cofactor_status == PK_COFACTOR_PROBABLE_PRIME) {
        char *c = cofactor_text(job);
        printf(" %s", c ? c : "?");
        free(c);
    }
    printf("\n");

    if (result.cofactor_status != PK_COFACTOR_ONE) {
        char *c = cofactor_text(job);
        const char *what = result.cofactor_status == PK_COFACTOR_PROBABLE_PRIME
                               ? "is a probable prime (passes BPSW; not proven)"
                           : result.cofactor_status == PK_COFACTOR_COMPOSITE
                               ? "is composite, its factors are above the bound"
                               : "was not classified (longer than the BPSW digit limit)";
        if (c && strlen(c) > 60) sprintf(c + 25, "...(%zu digits)", result.cofactor_digits);
        printf("  cofactor %s %s\n", c ? c : "?", what);
        free(c);
    }
    pk_job_destroy(job);
    return 0;
}

int main(int argc, char **argv)
{
    const char *bound = NULL;
    int i, failed = 0, numbers = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-b") == 0 && i + 1 < argc) {
            bound = argv[++i];
            continue;
        }
        numbers++;
        failed |= factor_one(argv[i], bound);
    }
    if (numbers == 0) {
        fprintf(stderr, "usage: %s [-b BOUND] N...   (PrimeKit %s)\n", argv[0], pk_version_string());
        return 2;
    }
    return failed;
}
