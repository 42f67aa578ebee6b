"""Balanced semiprimes for the CLI benchmark: COUNT products of two random primes of BITS/2 bits each whose
product has exactly BITS bits, from a fixed SEED, one per line on standard output.

    python3 semiprimes.py BITS COUNT SEED
"""
import random
import sys

BASES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41]


def is_prime(n: int) -> bool:
    """Miller-Rabin to the first 13 prime bases (deterministic below 3.3e24, far beyond chance above)."""
    if n < 2:
        return False
    for p in BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def prime(rng: random.Random, bits: int) -> int:
    while True:
        n = rng.getrandbits(bits) | (1 << (bits - 1)) | 1
        if is_prime(n):
            return n


def main() -> None:
    bits, count, seed = (int(a) for a in sys.argv[1:4])
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        n = prime(rng, bits // 2) * prime(rng, bits // 2)
        if n.bit_length() == bits:
            out.append(n)
    sys.stdout.write("\n".join(map(str, out)) + "\n")


main()
