\\ Generates complete_vectors.h (the factorizations test_complete.c checks against):
\\   gp -q complete_vectors.gp > body.txt, then paste body.txt into the table. Needs PARI/GP; the tests do not.
setrand(20261126);
out(n, what) = {
  my(f = factor(n), s = "");
  for (i = 1, #f~, s = concat(s, Str(if(i > 1, " ", ""), f[i,1], "^", f[i,2])));
  print("    {\"", what, "\", \"", n, "\", \"", s, "\"},");
}
rp(b) = nextprime(2^(b-1) + random(2^(b-1)));
out(2^128+1, "F7");
out(2^101-1, "M101");
out(2^137-1, "M137");
out(10^40+1, "10^40+1");
out(nextprime(10^19 + random(10^19)) * nextprime(10^39 + random(10^39)), "60 digits, a 20-digit factor");
{
for (k = 1, 16,
  my(n = 1, bits = [8, 12, 20, 30, 40, 50, 62, 66, 70]);
  for (j = 1, 2 + random(3), n *= rp(bits[1 + random(#bits)]));
  out(n, Str("mixed product ", k)));
}
out(rp(20)^5, "p20^5");
out(rp(40)^3, "p40^3");
out(rp(70)^2, "p70^2");
out(rp(66)^2 * rp(40)^3, "p66^2 q40^3");
out(rp(90)^2, "p90^2");
out(rp(33)^2 * rp(34), "p33^2 q34 (word size)");
out(561, "Carmichael 561");
out(41041, "Carmichael 41041");
out(825265, "Carmichael 825265");
out(321197185, "Carmichael 321197185");
{ my(k = 2^20 + 1); while (!(isprime(6*k+1) && isprime(12*k+1) && isprime(18*k+1)), k++); out((6*k+1)*(12*k+1)*(18*k+1), "Carmichael (6k+1)(12k+1)(18k+1), 70 bits"); }
{ my(k = 2^40); while (!(isprime(6*k+1) && isprime(12*k+1) && isprime(18*k+1)), k++); out((6*k+1)*(12*k+1)*(18*k+1), "Carmichael (6k+1)(12k+1)(18k+1), 131 bits"); }
out(2^127-1, "M127 (prime)");
out(rp(64) * rp(64), "two 64-bit primes");
out(rp(50) * rp(100), "p50 q100");
out(rp(45) * rp(45) * rp(45) * rp(45), "four 45-bit primes");
