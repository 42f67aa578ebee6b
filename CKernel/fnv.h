/*
 * fnv.h — FNV-1a 64, the one hash of every checksum the kernel writes
 * (checkpoint text, the word splitter's state line, cache files). Private to
 * the kernel; needs no GMP.
 */
#ifndef PK_FNV_H
#define PK_FNV_H

#include <stddef.h>
#include <stdint.h>

/* The start value, and one value (a byte, or a cache file's 64-bit word)
   folded in. */
#define PK_FNV_START UINT64_C(0xcbf29ce484222325)
static inline uint64_t pk_fnv_fold(uint64_t h, uint64_t v)
{
    return (h ^ v) * UINT64_C(0x100000001b3);
}

/* FNV-1a 64 of n bytes: a checkpoint's checksum line holds it for every byte
   before that line. */
static inline uint64_t pk_fnv(const char *s, size_t n)
{
    uint64_t h = PK_FNV_START;
    for (size_t i = 0; i < n; i++)
        h = pk_fnv_fold(h, (unsigned char)s[i]);
    return h;
}

#endif
