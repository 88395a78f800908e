// What the split-KV decode kernels (S*_splitkv_*.cu: FlashMLA's decode before its fix 01a2772 and
// after it) share: thread 0 initialises an mbarrier and fences the init to the cluster, the CTA
// synchronises, then the kernel waits for its PDL primary.  Each .cu holds only its loads after
// the wait (the __ldg ones ptxas hoists above ACQBULK, or the fix's plain ones).
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

#define SPLITKV_PROLOGUE_AND_WAIT()                                                                                   \
    __shared__ uint64_t bar;                                                                                          \
    if (threadIdx.x == 0) {                                                                                           \
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&bar)), "r"(1)); \
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");                                            \
    }                                                                                                                 \
    __syncthreads();                                                                                                  \
    cudaGridDependencySynchronize()

