// A kernel that waits for its PDL primary through CUTLASS-style GDC macros (include/gdc.h): with
// -DCUTLASS_ENABLE_GDC_FOR_SM90 the PTX has griddepcontrol.wait and the metadata __ldg after it may
// be hoisted above ACQBULK; without the define, PDL is compiled out (fuzzgpu sass says so).
#include <cstdint>
#include "gdc.h"

struct Params { const int4* meta; int4* out; };

template <typename T>
__global__ void decode_kernel(Params p)
{
    __shared__ T smem[128];
    smem[threadIdx.x] = T(threadIdx.x);
    __syncthreads();
    cutlass::arch::wait_on_dependent_grids();
    int4 v = __ldg(p.meta + blockIdx.x);
    v.x += int(smem[(threadIdx.x + 1) % 128]);
    p.out[blockIdx.x * blockDim.x + threadIdx.x] = v;
    cutlass::arch::launch_dependent_grids();
}

template __global__ void decode_kernel<float>(Params);
template __global__ void decode_kernel<int>(Params);
