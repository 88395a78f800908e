// minimal repro: at ptxas -O1 (sm_90a) the cluster barrier's one-CTA fallback tests the cluster size before the
// arrive and again before the wait, each time with its own LDC R, c[0x0][0x140]; ISETP.EQ.U32.AND P0, PT, R, 0x1.
// Here the first LDC (R6) is scheduled before the store's address, a 32-bit S2R R5 / MOV R4 between it and the
// ISETP: those do not write R6, so the two tests are still of one value (FlashInfer's trtllm all-reduce at -O1:
// 9 false "forbidden" of this shape, LDS R0 between LDC R2 and its ISETP).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void k(const float* in, float* out) {
  __shared__ float part;
  float x = in[threadIdx.x];
  if (threadIdx.x == 0) part = x;
  cg::this_cluster().sync();
  out[threadIdx.x] = part + x;
}
