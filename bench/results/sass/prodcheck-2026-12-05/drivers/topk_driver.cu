// driver: instantiate FlashInfer multi-CTA radix top-k (inter-CTA acquire/release, fences, atomics) via host launchers; kernel code unchanged
#include "flashinfer/math.cuh"
#include "flashinfer/topk.cuh"
namespace flashinfer { namespace sampling {
template cudaError_t RadixTopKMaskLogitsMultiCTA<float, int>(float*, float*, int*, uint32_t, uint32_t, uint32_t, RadixRowState*, cudaStream_t);
template cudaError_t RadixTopKRenormProbMultiCTA<float, int>(float*, float*, int*, uint32_t, uint32_t, uint32_t, RadixRowState*, cudaStream_t);
}}
