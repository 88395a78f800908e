// PDL review calls a bulk *store* (cp.async.bulk.global.shared::cta: shared -> global) a "global read".
// ThunderKittens bf16_b200_gemm (0b55588): the epilogue warps' TMA stores
// (cp.async.bulk.tensor.5d.global.shared::cta) run on a path without griddepcontrol.wait.
#include <cstdint>
__global__ void k(float* out, int role) {
  __shared__ alignas(128) float buf[256];
  if (role == 0) {
    asm volatile("griddepcontrol.wait;" ::: "memory");
    return;
  }
  buf[threadIdx.x] = threadIdx.x;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(buf));
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 1024;" :: "l"(out), "r"(s) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
