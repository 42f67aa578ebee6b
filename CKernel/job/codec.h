/*
 * job/codec.h — parts of the checkpoint text codec shared by the job's
 * units (checkpoint.c writes and reads the job's core, job/pipeline.c and the
 * splitters their own lines): a growing output buffer and a line reader.
 */
#ifndef PK_JOB_CODEC_H
#define PK_JOB_CODEC_H

#include "pk_internal.h"

/* Output: text appended to a malloc'd buffer; failed is set when memory ran out. */
typedef struct pk_sbuf {
    char *s;
    size_t len, cap;
    int failed;
} pk_sbuf;

void pk_sb_reserve(pk_sbuf *b, size_t more);
void pk_sb_text(pk_sbuf *b, const char *t);
void pk_sb_bytes(pk_sbuf *b, const char *t, size_t n);
/* "key value\n" */
void pk_sb_u64(pk_sbuf *b, const char *key, uint64_t v);
/* " value" (a space, then the decimal) */
void pk_sb_u64_word(pk_sbuf *b, uint64_t v);
void pk_sb_mpz(pk_sbuf *b, const mpz_t v);

/* Input: lines "key value\n" read in order. */
typedef struct pk_reader {
    const char *p, *end;
} pk_reader;

/* Read "key " and return the value up to the end of the line. */
int pk_field(pk_reader *r, const char *key, const char **val, size_t *vlen);
/* A line "key <canonical u64 below 2^64-1>". */
int pk_field_u64(pk_reader *r, const char *key, uint64_t *out);
/* Split "a b c d" into exactly count canonical u64 values (each below 2^64-1). */
int pk_parse_u64_list(const char *v, size_t n, uint64_t *out, int count);
/* The next space-separated word of [*v, end): sets *w, *wlen and moves *v past
   it and one space. PK_E_CHECKPOINT when there is none. */
int pk_next_word(const char **v, const char *end, const char **w, size_t *wlen);
/* A canonical u64 word. */
int pk_word_u64(const char *w, size_t n, uint64_t *out);
/* Set z from canonical decimal digits. */
int pk_set_mpz(mpz_t z, const char *v, size_t n);

#endif /* PK_JOB_CODEC_H */
