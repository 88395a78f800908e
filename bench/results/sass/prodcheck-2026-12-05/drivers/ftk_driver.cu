// driver: instantiate FlashInfer cluster top-k kernels (cluster barriers split arrive/wait, DSMEM atomics, PDL); kernel code unchanged
#include "flashinfer/fast_topk_clusters_exact.cuh"
namespace flashinfer { namespace sampling {
template __global__ void fast_topk_clusters_exact_kernel<float, int, 4, true>(const float*, int*, float*, int, int*, int*, int, int, int, int, int);
template __global__ void fast_topk_clusters_exact_page_table_transform_kernel<float, 8, true>(const float*, int*, int*, int*, int*, int*, int, int, int, int, int, int);
}}
