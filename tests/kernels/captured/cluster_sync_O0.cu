// tests/sass/test_sass_hostile_inputs.py: FlashInfer's trtllm all-reduce at ptxas -O0 had 28 false "forbidden" of this shape
// ptxas -O0: a shared load whose only later release is a cluster barrier's arrive.
// ptxas (sm_90a) emits the arrive and the wait each behind a run-time test of the cluster size
// (LDC c[0x0][0x140]; ISETP.EQ.U32 P0, R, 0x1), and at -O0 puts a self-move (MOV Rn, Rn) at the
// join label before the second test.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(float* out) {
  __shared__ float s;
  if (threadIdx.x == 0) s = out[0];
  __syncthreads();
  float v = s;
  cg::this_cluster().sync();
  out[threadIdx.x + 1] = v;
}
