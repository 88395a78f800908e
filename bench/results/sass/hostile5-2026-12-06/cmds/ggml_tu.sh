# usage: ggml_tu.sh TU   (TU = file stem in src/ggml-cuda)
cd /tmp/hostile5
G=/tmp/hostile5/src/ggml; T=$1; N=ggml_$T${SUF}
start=$(date +%s)
timeout 900 python3 -m fuzzgpu sass --arch ${ARCH:-sm_90a} --json --details --pdl-review --keep /tmp/hostile5/keep/$N $G/src/ggml-cuda/$T.cu \
 --nvcc-flag=-std=c++17 --nvcc-flag=-use_fast_math --nvcc-flag=-extended-lambda --nvcc-flag=-lineinfo --nvcc-flag=-DGGML_USE_CUDA --nvcc-flag=-DGGML_CUDA_USE_GRAPHS --nvcc-flag=-DGGML_CUDA_PEER_MAX_BATCH_SIZE=128 \
 --nvcc-flag=-I/tmp/hostile5/stubs --nvcc-flag=-I$G/include --nvcc-flag=-I$G/src --nvcc-flag=-I$G/src/ggml-cuda > logs/$N.json 2> logs/$N.err
echo rc=$? > logs/$N.rc; echo secs=$(($(date +%s)-start)) >> logs/$N.rc
