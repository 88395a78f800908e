// Tensor maps rewritten in shared memory (CUTLASS/CuTe's tma_descriptor_replace_*_in_shared_mem and
// tma_descriptor_cp_fence_release, cute/arch/copy_sm90_desc.hpp), for tests/sass/test_sass_tensormap.py.
// ptxas 13.0 (sm_90a) lowers tensormap.replace on a shared map to STS / STS.64 / LDS+STS of its fields
// and tensormap.cp_fenceproxy to an LDS and an ATOMG.E.EXCH per lane: none of them is the st.shared /
// ld.shared of the kernel, which come before the proxy fence.
#include <cstdint>

// both kernels' start: the map copied into shared memory with the kernel's own st.shared / ld.shared,
// then a proxy fence; returns the map's shared address
__device__ __forceinline__ uint32_t map_to_shared(const uint2* __restrict__ gmap, uint2* smap, uint32_t* out) {
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smap));
  if (threadIdx.x < 16) {
    uint2 v = gmap[threadIdx.x];
    asm volatile("st.shared.v2.u32 [%0], {%1,%2};" :: "r"(s + 8 * threadIdx.x), "r"(v.x), "r"(v.y) : "memory");
    asm volatile("st.shared.u32 [%0], %1;" :: "r"(s + 8 * threadIdx.x + 4), "r"(v.y) : "memory");
    uint32_t r;
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(s + 8 * (threadIdx.x ^ 1)) : "memory");
    out[threadIdx.x] = r;
  }
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncwarp();
  return s;
}

__global__ void smem_map(const uint2* __restrict__ gmap, void* new_ptr, uint32_t dim0, uint64_t stride1,
                         uint32_t* out, void* gdesc) {
  __shared__ alignas(128) uint2 smap[16];
  uint32_t s = map_to_shared(gmap, smap, out);
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" :: "r"(s), "l"(new_ptr) : "memory");
      asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(dim0) : "memory");
      asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" :: "r"(s), "l"(stride1) : "memory");
    }
    __syncwarp();
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], 128;"
                 :: "l"(gdesc), "r"(s) : "memory");
  }
}

// The hostile test's reproduction (CUTLASS example 57's pattern): the kernel's own st.shared /
// ld.shared before a proxy fence, three replaces of a shared map after it.  Before the replaces were
// modelled their STS/LDS were charged to the st.shared/ld.shared: five false "forbidden".
__global__ void replace_after_proxy_fence(const uint2* __restrict__ gmap, void* new_ptr, uint32_t dim0, uint64_t stride1,
                                          uint32_t* out) {
  __shared__ alignas(128) uint2 smap[16];
  uint32_t s = map_to_shared(gmap, smap, out);
  if (threadIdx.x == 0) {
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" :: "r"(s), "l"(new_ptr) : "memory");
    asm volatile("tensormap.replace.tile.global_dim.shared::cta.b1024.b32 [%0], 1, %1;" :: "r"(s), "r"(dim0) : "memory");
    asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" :: "r"(s), "l"(stride1) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], 128;" :: "l"(out + 64), "r"(s + 128) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// The rewrite issued before the wait for the copy's read of the map (docs/findings.md, 5: ptxas 13.0
// issues the replace's STG.E.64 above cp.async.bulk.wait_group.read's DEPBAR; the shape of
// tests/litmus/race-tensormap/NORACE-11-rewrite-after-wait-read.litmus), next to a map in shared
// memory rewritten after a proxy fence: the first is a finding, the second is not.
__global__ void rewrite_before_wait(char* base, uint32_t dim0) {
  __shared__ alignas(128) unsigned char smem[256];
  __shared__ alignas(128) uint2 smap[16];
  uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  uint32_t b = d + 128;
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smap));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
  asm volatile("{ .reg .b64 st_; mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 st_, [%0], 16; }" :: "r"(b) : "memory");
  asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2}], [%3];"
               :: "r"(d), "l"(base + 256), "r"(0), "r"(b) : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" :: "l"(base + 256), "l"(base + 128) : "memory");
  uint32_t done;
  do {
    asm volatile("{ .reg .pred p_; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p_, [%1], 0; selp.u32 %0, 1, 0, p_; }"
                 : "=r"(done) : "r"(b) : "memory");
  } while (done == 0);
  uint32_t r;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(r) : "r"(d) : "memory");
  asm volatile("st.shared.u32 [%0], %1;" :: "r"(s + 16), "r"(r) : "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("tensormap.replace.tile.global_stride.shared::cta.b1024.b64 [%0], 0, %1;" :: "r"(s), "l"((uint64_t)dim0 << 4) : "memory");
  *reinterpret_cast<uint32_t*>(base + 512) = r * 3 + done;
}
