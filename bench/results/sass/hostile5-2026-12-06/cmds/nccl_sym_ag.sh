cd /tmp/hostile5
start=$(date +%s)
timeout 900 python3 -m fuzzgpu sass --arch sm_90a --json --details --pdl-review --keep /tmp/hostile5/keep/nccl_sym_ag /tmp/hostile5/src/nccl/build/gensrc/symmetric/all_gather.cu  --nvcc-flag=-std=c++17 --nvcc-flag=--expt-extended-lambda --nvcc-flag=-Xptxas=-maxrregcount=128 --nvcc-flag=-DNCCL_OS_LINUX --nvcc-flag=-DNCCL_GIN_GDAKI_ENABLE=0 --nvcc-flag=-DDOCA_VERBS_USE_CUDA_WRAPPER --nvcc-flag=-DDOCA_VERBS_USE_NET_WRAPPER  --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/.. --nvcc-flag=-I/tmp/hostile5/src/nccl/build/include --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/../include --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/../include/plugin --nvcc-flag=-lineinfo > logs/nccl_sym_ag.json 2> logs/nccl_sym_ag.err
echo rc=$? > logs/nccl_sym_ag.rc
echo secs=$(($(date +%s)-start)) >> logs/nccl_sym_ag.rc
