// toolchain-and-ptxas.md section 4: L___ldca: no .CONSTANT -> after
#include "section4.cuh"
__global__ void L_ldca(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = __ldca(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
