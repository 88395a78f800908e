// minimal repro: runtime-cluster kernel (no __cluster_dims__) -> ptxas emits a one-CTA fallback for
// barrier.cluster.arrive/wait; at ptxas -O1 it re-tests c[0x0][0x140] between arrive and wait.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float* out, float v) {
  __shared__ float acc;
  if (threadIdx.x == 0) acc = v;
  cg::this_cluster().sync();
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
