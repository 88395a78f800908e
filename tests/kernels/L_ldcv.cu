// toolchain-and-ptxas.md section 4: L___ldcv: no .CONSTANT -> after
#include "section4.cuh"
__global__ void L_ldcv(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = __ldcv(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
