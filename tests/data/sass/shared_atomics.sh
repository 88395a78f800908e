#!/bin/sh
# Rebuilds shared_atomics' captured PTX and SASS (nvcc/ptxas 13.0.88, nvdisasm -c -gi) for sm_90a and sm_100a.
set -e
cd "$(dirname "$0")"
for a in sm_90a sm_100a; do
  nvcc -arch=$a -O3 -lineinfo -ptx shared_atomics.cu -o shared_atomics.$a.ptx
  sed -i "s#\"$(pwd)/#\"#" shared_atomics.$a.ptx  # (the file's name without this checkout's directory)
  ptxas -arch=$a -O3 -lineinfo shared_atomics.$a.ptx -o /tmp/shared_atomics.$a.cubin
  nvdisasm -c -gi /tmp/shared_atomics.$a.cubin > shared_atomics.$a.sass
done
