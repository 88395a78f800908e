// toolchain-and-ptxas.md section 4: D2: register loop before the wait, __ldg through __restrict__ -> HOISTED
#include <cuda_runtime.h>
__global__ void D2_regloop_before_ldg_restrict(const int* __restrict__ in, int* __restrict__ out, int n) {
    int acc = threadIdx.x;
    #pragma unroll 1
    for (int i = 0; i < n; ++i) acc = acc * 3 + (i ^ acc);
    cudaGridDependencySynchronize();
    int v = __ldg(in + blockIdx.x) + acc;
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
