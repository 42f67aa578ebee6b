/*
 * fuzz_restore — pk_job_restore on arbitrary checkpoint text.
 *
 * The input is checkpoint text as it would be read from a file. It is
 * restored as it is and, because random edits almost never keep the FNV-1a
 * checksum right, a second time with its last line replaced by the correct
 * checksum line, so that the parser and the consistency checks behind the
 * checksum are reached too.
 *
 * Properties, for each restore:
 *   - the status is PK_OK or a documented PK_E_* code, and *out is NULL on error;
 *   - an accepted text renders back byte for byte (checkpoint(restore(t)) == t);
 *   - the restored job satisfies fz_check_job;
 *   - after a bounded number of small steps it still does, percent has not
 *     decreased, and its new checkpoint restores to a job whose checkpoint is
 *     the same text.
 */
#include "fuzz_common.h"
#include "pk_internal.h" /* pk_fnv: mutated inputs are resealed the kernel's way */

/* Small limits keep every input quick: validation tests each listed factor. */
#define FZ_MAX_DIGITS 5000u

static void exercise(const char *text, size_t len, int simd)
{
    pk_options opt;
    pk_options_init(&opt);
    opt.max_digits = FZ_MAX_DIGITS;
    opt.simd = simd;
    pk_job *job = (pk_job *)&opt;
    int rc = pk_job_restore(text, len, &opt, &job);
    if (rc != PK_OK) {
        FZ_CHECK(job == NULL, "*out not NULL after %s", pk_status_name(rc));
        FZ_CHECK(rc == PK_E_CHECKPOINT || rc == PK_E_CHECKPOINT_VERSION ||
                     rc == PK_E_CHECKPOINT_STATE || rc == PK_E_TOO_LARGE,
                 "pk_job_restore returned %s", pk_status_name(rc));
        return;
    }
    FZ_CHECK(job != NULL, "PK_OK without a job");

    size_t len2 = 0;
    char *again = fz_checkpoint(job, &len2);
    FZ_CHECK(len2 == len && memcmp(again, text, len) == 0,
             "accepted checkpoint does not render back\n--- input\n%.*s--- rendered\n%s", (int)len,
             text, again);
    free(again);

    pk_progress pr;
    memset(&pr, 0, sizeof pr);
    pr.size = sizeof pr;
    pk_job_progress(job, &pr);
    double last = pr.percent;
    int done = fz_check_job(job);

    /* A few small steps: the restored state must carry on cleanly. */
    unsigned steps = fz_skip_steps(job) ? 0 : 4;
    for (unsigned i = 0; i < steps && !done; i++) {
        rc = pk_job_step(job, 1000);
        FZ_CHECK(rc == PK_MORE || rc == PK_DONE, "pk_job_step returned %s", pk_status_name(rc));
        done = fz_check_job(job);
        pk_job_progress(job, &pr);
        FZ_CHECK(pr.percent >= last, "percent went down: %g -> %g", last, pr.percent);
        last = pr.percent;
    }
    fz_check_round_trip(job, &opt);
    pk_job_destroy(job);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    /* The simd choice is a function of the input, so that a crash replays. */
    int simd = size ? data[size - 1] % 4 : 0;
    exercise(text, size, simd);

    /* Replace the last line (or append one) with the right checksum. */
    size_t body = size;
    if (body && text[body - 1] == '\n') {
        size_t start = body - 1;
        while (start > 0 && text[start - 1] != '\n')
            start--;
        if (body - 1 - start >= 9 && memcmp(text + start, "checksum ", 9) == 0)
            body = start;
    }
    char *fixed = malloc(body + 1 + 27);
    if (!fixed)
        return 0;
    memcpy(fixed, text, body);
    size_t n = body;
    if (n && fixed[n - 1] != '\n')
        fixed[n++] = '\n';
    n += (size_t)snprintf(fixed + n, 27, "checksum %016llx\n", (unsigned long long)pk_fnv(fixed, n));
    if (n != size || memcmp(fixed, text, n) != 0)
        exercise(fixed, n, simd);
    free(fixed);
    return 0;
}
