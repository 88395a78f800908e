// minimal repro (FlashInfer fb28d72, trtllm_fused_moe_dev_kernel.cu, activationKernel at sm_100a): a grid-stride
// loop nest whose body tests pointers the loop does not change.  NVVM (sm_100a) unswitches it on those tests
// and rotates each copy: the outer loop's header and latch lie together in the PTX, its body after the
// latch (a bra.uni back to the latch); ptxas lays each loop out contiguously.  `rotated` has no delay loop.
// `rotated_delay` is the same nest with a delay the source asks for (an empty asm volatile loop per token):
// ptxas deletes it (permitted-hazard loop-deleted).
#define NEST(DELAY)                                                                                  \
  for (int t = blockIdx.z; t < tokens; t += gridDim.z) {                                             \
    DELAY                                                                                            \
    for (int j = blockIdx.y; j < topk; j += gridDim.y) {                                             \
      int p = idx[t * topk + j];                                                                     \
      if (p == -1) continue;                                                                         \
      for (int h = threadIdx.x + blockDim.x * blockIdx.x; h < dim; h += blockDim.x * gridDim.x) {    \
        float x = in[(long)p * dim + h];                                                             \
        if (alpha != nullptr) x *= alpha[p];                                                         \
        if (beta != nullptr) x += beta[p];                                                           \
        out[(long)p * dim + h] = x;                                                                  \
      }                                                                                              \
    }                                                                                                \
  }

__global__ void rotated(const int* idx, const float* in, float* out, const float* alpha, const float* beta,
                        int tokens, int topk, int dim) {
  NEST()
}

__global__ void rotated_delay(const int* idx, const float* in, float* out, const float* alpha, const float* beta,
                              int tokens, int topk, int dim, int spin) {
  NEST(for (int i = 0; i < spin; ++i) asm volatile("");)
}
