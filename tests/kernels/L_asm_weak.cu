// toolchain-and-ptxas.md section 4: weak ld.global in asm -> after
#include "section4.cuh"
__global__ void L_asm_weak(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = ASM_LOAD("ld.global.u32") + NEIGHBOUR;
    STORE_OUT(v);
}
