// toolchain-and-ptxas.md section 4: L_nc_asm_volatile: asm volatile ld.global.nc with "memory" -> HOISTED
#include "section4.cuh"
__global__ void L_nc_asm_volatile(const int* in, int* out) {
    STS_SYNC_WAIT();
    int v = ASM_LOAD("ld.global.nc.u32") + NEIGHBOUR;
    STORE_OUT(v);
}
