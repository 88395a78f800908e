// -G -O0: every local lives on the thread's stack, read through %SP, a generic address; line 9 reads
// v's four words from the stack and one word of s (generic, the shared window): five generic loads
// ptxas keeps as five LD.E, one PTX ld of them not private.
__global__ void k(const int4* in, int* out) {
  __shared__ int s[128];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  int4 v = in[blockIdx.x];
  out[threadIdx.x] = v.x + v.y + v.z + v.w + s[(threadIdx.x + 32) % 128];
}
