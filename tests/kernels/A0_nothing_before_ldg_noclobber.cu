// toolchain-and-ptxas.md section 4: A0: wait without clobber, nothing before it, __ldg -> after
#include <cuda_runtime.h>
__global__ void A0_nothing_before_ldg_noclobber(const int* in, int* out) {

    asm volatile("griddepcontrol.wait;");
    int v = __ldg(in + blockIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
