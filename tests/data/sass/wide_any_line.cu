// Shape of FlashMLA sm100 decode head64 (ModelType::MODEL1), kernel.cuh:686-714:
// an int2 __ldg of indices before an mbarrier wait, then per index an 8-byte __ldg after it.
#include <cstdint>
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t phase) {
  uint32_t ticks = 0x989680;
  asm volatile("{\n.reg .pred P1;\nLAB_WAIT:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1, %2;\n"
               "@P1 bra DONE;\nbra LAB_WAIT;\nDONE:\n}\n"
               :: "r"(bar), "r"(phase), "r"(ticks) : "memory");
}
__global__ void k(const int2* __restrict__ idx, const uint64_t* __restrict__ scales,
                  uint64_t* out, int n, int bs, int64_t bstride) {
  __shared__ uint64_t bar[2];
  __shared__ uint64_t buf[2][64];
  uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar[0]);
  int phase = 0;
#pragma unroll 1
  for (int it = 0; it < n; ++it) {
    int2 ix = __ldg(idx + it * 64 + threadIdx.x);        // 8 bytes, before the wait
    mbar_wait(b, phase ^ 1);
    int my[2] = {ix.x, ix.y};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      int64_t off = my[i] != -1 ? (unsigned)my[i] / bs * bstride + (unsigned)my[i] % bs * 8 : 0;
      buf[i][threadIdx.x] = __ldg(scales + off);       // 8 bytes, after the wait
    }
    phase ^= 1;
  }
  __syncthreads();
  out[threadIdx.x] = buf[0][threadIdx.x] + buf[1][threadIdx.x];
}
