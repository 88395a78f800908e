// driver: instantiate FlashInfer/TRT-LLM custom all-reduce for 8 ranks/node (one-shot, two-shot, lamport norm, push/pull modes); kernel code unchanged
#include "flashinfer/comm/trtllm_allreduce.cuh"
namespace flashinfer { namespace trtllm_allreduce {
template cudaError_t AllReduceDispatchRanksPerNode<half, 8>(AllReduceStrategyType, AllReduceStrategyConfig, AllReduceFusionOp, AllReduceParams<half>&, bool, cudaStream_t);
}}
