// Loads of one address on an if's two arms, each arm with its own LDS.64 (the shape of CUB's DeviceScanKernel on
// sm_100a, by a helper of ours): paired by the address mapping across the arms, they were reported 'merged'
struct S3 { float a, b, c; };
// the two loads of the helper are on two source lines
__device__ __forceinline__ float sum2(const S3 *p) {
  float a = p->a;
  float b = p->b;
  return a + b;
}
__global__ void k(float *out, int n, int m, int s) {
  __shared__ __align__(16) S3 sm[512];
  int t = threadIdx.x, i;
  asm("mov.u32 %0, %1;" : "=r"(i) : "r"(2 * (s & 7)));  // alignment hidden from NVVM, not from ptxas
  const S3 *base = sm + i;
  float r;
  if (n == 0) {                 // no barrier on this path
    sm[256 + t].c = t;
    r = sum2(base + 10) * 3.0f;
  } else {
    sm[t].c = t;
    __syncthreads();
    if (__builtin_expect(m > 5, 0)) r = sum2(base + 10) + sm[20].c;
    else r = sm[19].c;
  }
  out[t] = r;
}
