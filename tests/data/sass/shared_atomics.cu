// Atomics on __shared__ data that ATOMS has no instruction for: ptxas 13.0 (sm_90a and sm_100a) emits an
// LDS of the word and an ATOMS.CAST.SPIN (or ATOMS.CAS) loop for each -- the hostile review of
// 2026-12-05, CUTLASS example 77's reference kernel (atomicAdd on a __shared__ float).  The LDS is the
// atom's expansion, not a PTX ld.shared.  `iadd` is the control: ATOMS.ADD, no LDS.  One statement a line,
// so that each SASS operation's line says whose it is.
#include <cuda_fp16.h>

__global__ void fadd(const float* in, float* out) {
  __shared__ float s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0.f;
  __syncthreads();
  atomicAdd(&s[threadIdx.x & 3], in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}

__global__ void dadd(const double* in, double* out) {
  __shared__ double s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0.;
  __syncthreads();
  atomicAdd(&s[threadIdx.x & 3], in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}

__global__ void umax64(const unsigned long long* in, unsigned long long* out) {
  __shared__ unsigned long long s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  atomicMax(&s[threadIdx.x & 3], in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}

__global__ void hred(const unsigned short* in, unsigned short* out) {
  __shared__ unsigned short s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  unsigned a = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x & 3]);
  asm volatile("red.shared.add.noftz.f16 [%0], %1;" :: "r"(a), "h"(in[threadIdx.x]) : "memory");
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}

__global__ void iadd(const int* in, int* out) {
  __shared__ int s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&s[threadIdx.x & 3], in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}
