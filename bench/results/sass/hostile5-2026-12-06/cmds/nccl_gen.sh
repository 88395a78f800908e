# usage: nccl_gen.sh NAME SRC [extra nvcc flags...]
cd /tmp/hostile5
NAME=$1; SRC=$2; shift 2
N=/tmp/hostile5/src/nccl/src/device
start=$(date +%s)
timeout 900 python3 -m fuzzgpu sass --arch ${ARCH:-sm_90a} --json --details --pdl-review --keep /tmp/hostile5/keep/$NAME $SRC \
 --nvcc-flag=-std=c++17 --nvcc-flag=--expt-extended-lambda --nvcc-flag=-Xptxas=-maxrregcount=${MAXRREG:-96} --nvcc-flag=-DNCCL_OS_LINUX \
 --nvcc-flag=-I$N --nvcc-flag=-I$N/.. --nvcc-flag=-I/tmp/hostile5/src/nccl/build/include --nvcc-flag=-I$N/../include --nvcc-flag=-I$N/../include/plugin --nvcc-flag=-lineinfo "$@" > logs/$NAME.json 2> logs/$NAME.err
echo rc=$? > logs/$NAME.rc
echo secs=$(($(date +%s)-start)) >> logs/$NAME.rc
