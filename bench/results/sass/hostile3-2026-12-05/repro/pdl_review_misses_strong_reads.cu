// PDL review: global reads before griddepcontrol.wait that it does not report.
// Its read pattern (fuzzgpu/sass/pdl.py _GLOBAL_READ) wants `.global` right after `ld`/`ldu`/`atom`,
// so ld.volatile.global, ld.relaxed.gpu.global, ld.acquire.gpu.global and atom.relaxed.gpu.global
// (state space given, after the .sem/.scope qualifiers) are not seen; ld.global.nc is.
__global__ void k(const int* __restrict__ a, volatile int* b, int* c, int* d, int* e, int* out) {
  int x = __ldg(a);                                                            // reported
  int y = *b;                                                                  // ld.volatile.global: missed
  int z, w, v;
  asm volatile("ld.relaxed.gpu.global.b32 %0, [%1];" : "=r"(z) : "l"(c) : "memory");   // missed
  asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(w) : "l"(d) : "memory");   // missed
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], 1;" : "=r"(v) : "l"(e) : "memory");  // missed
  asm volatile("griddepcontrol.wait;" ::: "memory");
  out[threadIdx.x] = x + y + z + w + v;
}
