// driver: instantiate the vLLM-derived custom all-reduce kernels (FlashInfer copy), kernel code unchanged
#include "flashinfer/comm/vllm_custom_all_reduce.cuh"
namespace vllm {
template __global__ void cross_device_reduce_1stage<half, 8>(RankData*, RankSignals, Signal*, half*, int, int);
template __global__ void cross_device_reduce_2stage<half, 8>(RankData*, RankSignals, Signal*, half*, int, int);
template __global__ void cross_device_reduce_2stage<nv_bfloat16, 4>(RankData*, RankSignals, Signal*, nv_bfloat16*, int, int);
}
