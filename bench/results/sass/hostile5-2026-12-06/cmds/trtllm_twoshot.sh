cd /tmp/hostile5
T=/tmp/hostile5/src/trtllm/cpp
start=$(date +%s)
python3 -m fuzzgpu sass --arch ${ARCH:-sm_90a} --json --details --pdl-review --keep keep/trtllm_twoshot${SUF} $T/tensorrt_llm/kernels/communicationKernels/lowlatTwoShotAllreduceKernels.cu --nvcc-flag=-std=c++17 --nvcc-flag=-lineinfo --nvcc-flag=-DENABLE_BF16 --nvcc-flag=--expt-relaxed-constexpr --nvcc-flag=--expt-extended-lambda --nvcc-flag=-I$T > logs/trtllm_twoshot${SUF}.json 2> logs/trtllm_twoshot${SUF}.err
echo rc=$? > logs/trtllm_twoshot${SUF}.rc; echo secs=$(($(date +%s)-start)) >> logs/trtllm_twoshot${SUF}.rc
