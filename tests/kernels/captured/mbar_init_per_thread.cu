// mbarrier.init at a per-thread address: ptxas 13.0 on sm_100a writes it with a plain STS.64 (SYNCS.EXCH at a
// uniform one, and on sm_90a): tests/sass/test_sass_hostile_inputs.py
#include <cstdint>
// each thread initialises its own mbarrier (per-thread address, as in CUB's warpspeed
// sync_handler.cuh:124-126 loop `for (i = threadIdx.x; i < n; i += blockDim.x) mbarrier_init(&bars[i], count)`)
__global__ void init_per_thread(int *out, int count) {
  __shared__ alignas(8) uint64_t bar[128];
  uint32_t a = (uint32_t)__cvta_generic_to_shared(&bar[threadIdx.x]);
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(a), "r"(count) : "memory");
  __syncthreads();
  out[threadIdx.x] = 1;
}
