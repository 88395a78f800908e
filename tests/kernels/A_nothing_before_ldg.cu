// toolchain-and-ptxas.md section 4: A: asm volatile wait with "memory", nothing before it, __ldg -> after ACQBULK
#include <cuda_runtime.h>
__global__ void A_nothing_before_ldg(const int* in, int* out) {

    asm volatile("griddepcontrol.wait;" ::: "memory");
    int v = __ldg(in + blockIdx.x);
    out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
