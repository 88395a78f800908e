// toolchain-and-ptxas.md section 4: L_plain_restrict: const __restrict__ plain deref (NVVM emits ld.global.nc) -> HOISTED
#include "section4.cuh"
__global__ void L_plain_restrict(const int* __restrict__ in, int* __restrict__ out) {
    STS_SYNC_WAIT();
    int v = in[blockIdx.x] + NEIGHBOUR;
    STORE_OUT(v);
}
