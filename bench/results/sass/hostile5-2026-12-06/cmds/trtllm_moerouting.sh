cd /tmp/hostile5
T=/tmp/hostile5/src/trtllm/cpp
python3 -m fuzzgpu sass --arch sm_90a --json --details --pdl-review --keep keep/trtllm_moerouting $T/tensorrt_llm/kernels/customMoeRoutingKernels.cu --nvcc-flag=-std=c++17 --nvcc-flag=-lineinfo --nvcc-flag=-DENABLE_BF16 --nvcc-flag=--expt-relaxed-constexpr --nvcc-flag=--expt-extended-lambda --nvcc-flag=-I$T --nvcc-flag=-I$T/tensorrt_llm/kernels > logs/trtllm_moerouting.json 2> logs/trtllm_moerouting.err
