// atomicAdd on a __shared__ float: PTX atom.shared.add.f32; ptxas (sm_100a) emulates it with
// LDS + ATOMS.CAST.SPIN loop. The LDS is reported as "no PTX LDS to account for it".
__global__ void k(const float* in, float* out) {
  __shared__ float s[4];
  if (threadIdx.x < 4) s[threadIdx.x] = 0.f;
  __syncthreads();
  atomicAdd(&s[threadIdx.x & 3], in[threadIdx.x]);
  __syncthreads();
  if (threadIdx.x < 4) out[threadIdx.x] = s[threadIdx.x];
}
