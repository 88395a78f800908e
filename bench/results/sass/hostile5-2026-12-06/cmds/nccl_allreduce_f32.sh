cd /tmp/hostile5
start=$(date +%s)
python3 -m fuzzgpu sass --arch sm_90a --json --details --pdl-review --keep /tmp/hostile5/keep/nccl_allreduce_f32 /tmp/hostile5/src/nccl/build/gensrc/all_reduce_sum_f32.cu  --nvcc-flag=-std=c++17 --nvcc-flag=--expt-extended-lambda --nvcc-flag=-Xptxas=-maxrregcount=96 --nvcc-flag=-DNCCL_OS_LINUX --nvcc-flag=-rdc=true  --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/.. --nvcc-flag=-I/tmp/hostile5/src/nccl/build/include --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/../include --nvcc-flag=-I/tmp/hostile5/src/nccl/src/device/../include/plugin --nvcc-flag=-lineinfo > logs/nccl_allreduce_f32.json 2> logs/nccl_allreduce_f32.err
echo rc=$? > logs/nccl_allreduce_f32.rc
echo secs=$(($(date +%s)-start)) >> logs/nccl_allreduce_f32.rc
