// Atomics at generic addresses: ptxas implements each for the global path and the shared window
// (tests/sass/test_sass_generic_atomics.py).  The pointer is read from memory, so that cicc cannot
// tell its state space and keeps the generic atom; each statement on a line of its own, so that
// each SASS operation's line says whose it is.

extern "C" __global__ void cas64(unsigned long long** pp, unsigned long long a, unsigned long long b) {
  unsigned long long* p = *pp;
  unsigned long long r;
  asm volatile("atom.cas.b64 %0, [%1], %2, %3;" : "=l"(r) : "l"(p), "l"(a), "l"(b) : "memory");
  p[8] = r;
}

extern "C" __global__ void cas32(unsigned** pp, unsigned a, unsigned b) {
  unsigned* p = *pp;
  unsigned r;
  asm volatile("atom.cas.b32 %0, [%1], %2, %3;" : "=r"(r) : "l"(p), "r"(a), "r"(b) : "memory");
  p[8] = r;
}

extern "C" __global__ void exch64(unsigned long long** pp, unsigned long long a) {
  unsigned long long* p = *pp;
  unsigned long long r;
  asm volatile("atom.exch.b64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(a) : "memory");
  p[8] = r;
}

extern "C" __global__ void add64(unsigned long long** pp, unsigned long long a) {
  unsigned long long* p = *pp;
  unsigned long long r;
  asm volatile("atom.add.u64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(a) : "memory");
  p[8] = r;
}

extern "C" __global__ void max64(unsigned long long** pp, unsigned long long a) {
  unsigned long long* p = *pp;
  unsigned long long r;
  asm volatile("atom.max.u64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(a) : "memory");
  p[8] = r;
}

extern "C" __global__ void addf(float** pp, float a) {
  float* p = *pp;
  float r;
  asm volatile("atom.add.f32 %0, [%1], %2;" : "=f"(r) : "l"(p), "f"(a) : "memory");
  p[8] = r;
}

// DeepEP's shape (csrc/kernels/ibgda_device.cuh): a fence, then a 64-bit CAS at a generic address
extern "C" __global__ void fence_then_cas64(unsigned long long** pp, unsigned* flag, unsigned long long a, unsigned long long b) {
  unsigned long long* p = *pp;
  unsigned f;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(f) : "l"(flag) : "memory");
  asm volatile("fence.acq_rel.gpu;" ::: "memory");
  unsigned long long r;
  asm volatile("atom.cas.b64 %0, [%1], %2, %3;" : "=l"(r) : "l"(p), "l"(a), "l"(b) : "memory");
  p[8] = r + f;
}
