// A PDL secondary kernel (fuzzgpu sass --pdl-review): `early` reads `meta` and `data` before it waits
// for the primary grid; `late` waits first.  With -lineinfo the review names lines 7 and 8.
#include <cuda_runtime.h>

__global__ void early(const int* meta, const int* data, int* out)
{
    int m = meta[blockIdx.x];  // read before the wait: is it written by the primary grid?
    if (threadIdx.x == 0) out[0] = __ldg(data);  // also before the wait, on one branch
    cudaGridDependencySynchronize();
    out[threadIdx.x + 1] = data[threadIdx.x] + m;
}

__global__ void late(const int* data, int* out)
{
    cudaGridDependencySynchronize();
    out[threadIdx.x] = data[threadIdx.x];
}
