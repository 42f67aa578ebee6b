/*
 * status.c — version, status names and messages, option defaults.
 */
#include <stdlib.h>
#include <string.h>

#include "pk_internal.h"

#define PK_STR2(x) #x
#define PK_STR(x) PK_STR2(x)

unsigned pk_version_number(void) { return PK_VERSION_NUMBER; }

const char *pk_version_string(void)
{
    return PK_STR(PK_VERSION_MAJOR) "." PK_STR(PK_VERSION_MINOR) "." PK_STR(PK_VERSION_PATCH);
}

typedef struct pk_status_info {
    int code;
    const char *name;
    const char *message;
} pk_status_info;

static const pk_status_info pk_statuses[] = {
    {PK_OK, "PK_OK", "success"},
    {PK_MORE, "PK_MORE", "the budget was spent and work remains"},
    {PK_DONE, "PK_DONE", "the job is finished"},
    {PK_INTERRUPTED, "PK_INTERRUPTED", "the step was interrupted; the job can continue"},
    {PK_E_ARG, "PK_E_ARG", "invalid argument (a required pointer is NULL or a size field is wrong)"},
    {PK_E_PARSE, "PK_E_PARSE", "candidate is not a canonical decimal integer"},
    {PK_E_RANGE, "PK_E_RANGE", "candidate is below 2"},
    {PK_E_TOO_LARGE, "PK_E_TOO_LARGE", "candidate has more digits than the limit"},
    {PK_E_OPTIONS, "PK_E_OPTIONS", "invalid options (malformed or empty divisor range, or bad limits)"},
    {PK_E_NOMEM, "PK_E_NOMEM", "out of memory"},
    {PK_E_BUFFER, "PK_E_BUFFER", "buffer too small; the required length was reported"},
    {PK_E_NOT_DONE, "PK_E_NOT_DONE", "the job is not finished"},
    {PK_E_INCOMPLETE, "PK_E_INCOMPLETE", "the factorization is not complete"},
    {PK_E_TOO_MANY, "PK_E_TOO_MANY", "more divisors than allowed"},
    {PK_E_INDEX, "PK_E_INDEX", "index out of range"},
    {PK_E_CHECKPOINT, "PK_E_CHECKPOINT", "checkpoint is malformed, truncated or fails its checksum"},
    {PK_E_CHECKPOINT_VERSION, "PK_E_CHECKPOINT_VERSION", "checkpoint format version is not supported"},
    {PK_E_CHECKPOINT_STATE, "PK_E_CHECKPOINT_STATE", "checkpoint contents are inconsistent"},
    {PK_E_INTERNAL, "PK_E_INTERNAL", "internal error"},
    {PK_E_IO, "PK_E_IO", "a file could not be opened, read or written"},
    {PK_E_CACHE_FILE, "PK_E_CACHE_FILE", "cache file is truncated, corrupt, or of another format or layout"},
};

static const pk_status_info *pk_status_find(int status)
{
    for (size_t i = 0; i < sizeof pk_statuses / sizeof pk_statuses[0]; i++)
        if (pk_statuses[i].code == status)
            return &pk_statuses[i];
    return NULL;
}

const char *pk_status_name(int status)
{
    const pk_status_info *info = pk_status_find(status);
    return info ? info->name : "PK_UNKNOWN_STATUS";
}

const char *pk_status_message(int status)
{
    const pk_status_info *info = pk_status_find(status);
    return info ? info->message : "unknown status code";
}

void pk_options_init(pk_options *options)
{
    if (!options)
        return;
    memset(options, 0, sizeof *options);
    options->size = sizeof *options;
    options->from = NULL;
    options->bound = NULL;
    options->max_digits = PK_DEFAULT_MAX_DIGITS;
    options->bpsw_digits = PK_DEFAULT_BPSW_DIGITS;
    options->simd = PK_SIMD_AUTO;
    const char *env = getenv("PRIMEKIT_SIMD");
    if (env) {
        if (strcmp(env, "portable") == 0)
            options->simd = PK_SIMD_PORTABLE;
        else if (strcmp(env, "avx2") == 0)
            options->simd = PK_SIMD_AVX2;
        else if (strcmp(env, "avx512") == 0)
            options->simd = PK_SIMD_AVX512;
    }
}
