// minimal repro: two __shared__ variables; ptxas addresses b[] from the CTA window base (0x400)
// with b's own offset (+4) folded into the immediates, so [R+0xc] is b+8, not b+12.
__global__ void k(float* out, const float* in) {
  __shared__ float a;
  __shared__ float b[6];
  int w = threadIdx.x / 32;
  if ((threadIdx.x & 31) == 0) b[1 + w] = in[threadIdx.x];
  __syncthreads();
  if (threadIdx.x == 0) a = b[2] * b[3] + b[4];
  __syncthreads();
  out[threadIdx.x] = a;
}
