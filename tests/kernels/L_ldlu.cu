// toolchain-and-ptxas.md section 4: L___ldlu: no .CONSTANT -> after
#include "section4.cuh"
__global__ void L_ldlu(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = __ldlu(in + blockIdx.x) + NEIGHBOUR;
    STORE_OUT(v);
}
