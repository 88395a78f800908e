#!/bin/sh
# Rebuilds stack_generic's captured PTX and SASS (nvcc/ptxas 13.0.88 at -G -O0, nvdisasm -c -gi), sm_90.
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_90 -G -O0 -ptx stack_generic.cu -o stack_generic.sm_90.ptx
sed -i "s#\"$(pwd)/#\"#" stack_generic.sm_90.ptx  # (the file's name without this checkout's directory)
ptxas -arch=sm_90 -g -O0 stack_generic.sm_90.ptx -o /tmp/stack_generic.sm_90.cubin
nvdisasm -c -gi /tmp/stack_generic.sm_90.cubin > stack_generic.sm_90.sass
