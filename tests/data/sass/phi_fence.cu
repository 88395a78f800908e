// A pointer that is `c + 38` on one path and `dflt` on the other (a phi NVVM writes as two `mov`/`add`
// definitions of one PTX register), loaded through after a __threadfence().  ptxas keeps every load;
// fuzzgpu sass resolved the pointer to `c + 304` by the listing's last definition and reported the load
// after the fence "merged" with c[51] before it: a false "forbidden" (a hostile review, 2026-12-06: the
// cause of false "merged" findings in NCCL's LL128 primitives).  phi_fence.sm_90a.{ptx,sass}: nvcc/ptxas 13.0.
__global__ void phi_fence(long** conns, long* dflt, long* out, int flag) {
  long* c = conns[0];
  long a = c[51];          // [c+408]
  long b = c[39];          // [c+312]
  long d = dflt[13];       // [dflt+104]
  long* p = dflt;
  if (flag) {
    p = c + 38;            // c+304
    out[1] = b;
  }
  __threadfence();
  long e = p[13];          // [p+104]: [c+408] only when flag != 0
  out[0] = a + b + d + e;
}
