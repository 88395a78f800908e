// toolchain-and-ptxas.md section 4: L___ldcg: no .CONSTANT -> after
#include "section4.cuh"
__global__ void L_ldcg(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = __ldcg(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
