// What the kernels of toolchain-and-ptxas.md section 4 with a shared-memory prologue share (T3, the
// L_* loads, the X_* syncs after the wait; D2/T4's register loop): the code before the wait, the
// shared word the load is added to, an inline-PTX load, and the store of the result.  Each .cu
// holds only its load (and what stands between the wait and it).
#pragma once
#include <cuda_runtime.h>

// a shared-memory store and __syncthreads before the wait: ptxas may hoist an .nc load above all three
#define STS_SYNC_WAIT()                  \
    __shared__ int s[256];               \
    s[threadIdx.x] = threadIdx.x * 3;    \
    __syncthreads();                     \
    cudaGridDependencySynchronize()

// a register loop of n iterations before the wait (T4, D2)
#define REGLOOP_WAIT()                                                  \
    int acc = threadIdx.x;                                              \
    _Pragma("unroll 1")                                                 \
    for (int i = 0; i < n; ++i) acc = acc * 3 + (i ^ acc);              \
    cudaGridDependencySynchronize()

// the neighbour's shared word (STS_SYNC_WAIT's s)
#define NEIGHBOUR s[(threadIdx.x + 1) % 256]

// in[blockIdx.x] read by the inline-PTX load INS (asm volatile, "memory" clobber)
#define ASM_LOAD(INS) [&]{ int r; asm volatile(INS " %0, [%1];" : "=r"(r) : "l"(in + blockIdx.x) : "memory"); return r; }()

// the kernel's result
#define STORE_OUT(v) out[blockIdx.x * blockDim.x + threadIdx.x] = v
