// two __shared__ arrays of different alignment: s (float[3], align 4) declared before buf (float2[6], align 8);
// ptxas lays s at +0 and buf at +0x10 (4 bytes of padding) and folds buf's offset into the immediates
__global__ void k(float* out, const float2* in) {
  __shared__ float s[3];
  __shared__ float2 buf[6];
  int w = threadIdx.x / 32;
  if ((threadIdx.x & 31) == 0) buf[1 + w] = in[threadIdx.x];
  if (threadIdx.x < 3) s[threadIdx.x] = 0.f;
  __syncthreads();
  if (threadIdx.x == 0) s[1] = buf[2].x * buf[2].y + buf[4].x;
  __syncthreads();
  out[threadIdx.x] = s[1] + s[2];
}
