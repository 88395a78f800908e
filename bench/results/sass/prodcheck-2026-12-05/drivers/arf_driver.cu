// driver: instantiate two FlashInfer/TRT-LLM allreduce-fusion kernels (Lamport one-shot, two-shot with release/acquire barrier); kernel code unchanged
#include "flashinfer/comm/trtllm_allreduce_fusion.cuh"
namespace flashinfer { namespace trtllm_allreduce_fusion {
template __global__ void allreduce_fusion_kernel_oneshot_lamport<AllReduceFusionPattern::kARResidualRMSNorm, half, 8, true, true>(AllReduceFusionParams<half>);
template __global__ void allreduce_fusion_kernel_twoshot_sync<AllReduceFusionPattern::kARResidualRMSNorm, half, 8, true>(AllReduceFusionParams<half>, std::array<int, 8>, std::array<int, 8>);
}}
