cd /tmp/hostile5
start=$(date +%s)
python3 -m fuzzgpu sass --arch sm_90a --json --details --pdl-review --keep /tmp/hostile5/keep/ggml_allreduce /tmp/hostile5/src/ggml/src/ggml-cuda/allreduce.cu  --nvcc-flag=-std=c++17 --nvcc-flag=-use_fast_math --nvcc-flag=-extended-lambda --nvcc-flag=-lineinfo --nvcc-flag=-DGGML_USE_CUDA --nvcc-flag=-DGGML_CUDA_USE_GRAPHS --nvcc-flag=-DGGML_CUDA_PEER_MAX_BATCH_SIZE=128  --nvcc-flag=-I/tmp/hostile5/stubs --nvcc-flag=-I/tmp/hostile5/src/ggml/include --nvcc-flag=-I/tmp/hostile5/src/ggml/src --nvcc-flag=-I/tmp/hostile5/src/ggml/src/ggml-cuda > logs/ggml_allreduce.json 2> logs/ggml_allreduce.err
echo rc=$? > logs/ggml_allreduce.rc
echo secs=$(($(date +%s)-start)) >> logs/ggml_allreduce.rc
