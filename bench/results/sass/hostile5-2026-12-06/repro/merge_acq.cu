// Shape of NCCL 5067397c prims_simple.h:492/504/518 (ncclDevFunc_AllReduce_Sum_f32_COLLNET_CHAIN_SIMPLE, sm_100a):
// a weak load of x, an acquire, and a weak load of x again.  If ptxas reuses the first load's value for the
// second (the single SASS load stays *before* the acquire), the second load has in effect risen above the acquire.
__global__ void merge_acq(unsigned* x, unsigned long long* f, unsigned* out, int mode) {
  unsigned a = *(unsigned*)x;                  // weak load of x
  unsigned long long v;
  if (mode)
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(f) : "memory");
  else
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(f) : "memory");
  unsigned b = *(unsigned*)x;                  // weak load of x after the acquire
  out[0] = a; out[1] = b; out[2] = (unsigned)v;
}
