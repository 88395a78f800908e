// A weak load of x, an unconditional ld.acquire.sys of f, a weak load of x again.
__global__ void merge_acq_uncond(unsigned* x, unsigned long long* f, unsigned* out) {
  unsigned a = *x;
  unsigned long long v;
  asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(f) : "memory");
  unsigned b = *x;
  out[0] = a; out[1] = b; out[2] = (unsigned)v;
}
