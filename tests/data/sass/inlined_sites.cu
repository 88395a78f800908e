// Shape of NCCL 5067397c prims_ll.h:357/362 inlined at all_reduce.h:169/189/210 (TREE_LL, sm_100a):
// one helper inlined at three call sites separated by barriers.  At sites 1 and 2 it reads s[48..49] (line A) and
// then, after an empty asm that only stops NVVM's CSE, re-reads s[49] (line B); ptxas merges the re-read with the
// line-A load of its own site (legal: nothing between them orders memory).  Site 3 reads s[48..51] on line B only.
// With -DNO_SYNC nothing separates the sites, and ptxas loads s[48..51] once for all three: merges across call
// sites with nothing between that orders memory (permitted-hazard "merged" findings).
// inlined_sites.sm_90a.{ptx,sass} and inlined_sites_nosync.sm_90a.{ptx,sass}: nvcc/ptxas 13.0, without and with -DNO_SYNC.
__shared__ int s[256];
template <int K>
__device__ __forceinline__ int site() {
  int a = 0, b = 0;
  if (K != 3) { a = s[48]; b = s[49]; }                                  // line A
  asm volatile("" ::: "memory");
  int again = s[49] + (K == 3 ? s[48] + s[50] + s[51] : 0);              // line B
  return a * K + b + again * 3;
}
#ifdef NO_SYNC
#define BETWEEN_SITES(r) (r) ^= threadIdx.x
#else
#define BETWEEN_SITES(r) do { __syncthreads(); s[threadIdx.x] += (r); __syncthreads(); } while (0)
#endif
__global__ void inlined_sites(int* out) {
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int r = site<1>();
  BETWEEN_SITES(r);
  r += site<2>();
  BETWEEN_SITES(r);
  r += site<3>();
  out[threadIdx.x] = r;
}
