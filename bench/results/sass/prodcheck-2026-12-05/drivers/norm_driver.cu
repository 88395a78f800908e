// driver: instantiate FlashInfer norm kernels (PDL griddepcontrol) via their host launchers; kernel code unchanged
#include "flashinfer/norm.cuh"
namespace flashinfer { namespace norm {
template cudaError_t RMSNorm<half>(half*, half*, half*, uint32_t, uint32_t, uint32_t, uint32_t, float, bool, cudaStream_t);
template cudaError_t FusedAddRMSNorm<nv_bfloat16>(nv_bfloat16*, nv_bfloat16*, nv_bfloat16*, uint32_t, uint32_t, uint32_t, uint32_t, float, bool, cudaStream_t);
}}
