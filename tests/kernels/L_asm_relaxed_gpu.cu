// toolchain-and-ptxas.md section 4: ld.relaxed.gpu in asm -> after
#include "section4.cuh"
__global__ void L_asm_relaxed_gpu(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = ASM_LOAD("ld.relaxed.gpu.global.u32") + NEIGHBOUR;
    STORE_OUT(v);
}
