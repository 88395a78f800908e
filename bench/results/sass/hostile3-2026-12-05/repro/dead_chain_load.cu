// Shared loads whose values feed only a warp shuffle whose result is unused: NVVM keeps the
// shfl.sync (convergent), ptxas deletes it and the whole chain, loads included.  The checker's
// "value read later" test is one step (the register is read by the next instruction), so it says
// "no SASS load paired with it, but its value is read later, so ptxas did not delete it ... not checked"
// instead of a deleted load.  Shape of TransformerEngine d0067d0 quantize_transpose_nvfp4_2D_kernel
// (an amax computed into shfl.sync.bfly and dropped), sm_100a.
__global__ void k(const float* in, float* out) {
  __shared__ float s[256];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  float a = fmaxf(fabsf(s[threadIdx.x ^ 1]), fabsf(s[threadIdx.x ^ 2]));
  a = fmaxf(a, __shfl_xor_sync(0xffffffffu, a, 1));   // result never used
  __syncthreads();
  out[threadIdx.x] = 1.0f;
}
