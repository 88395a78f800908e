#!/bin/sh
# Rebuilds wide_any_line's captured PTX and SASS (nvcc/ptxas 13.0.88, nvdisasm -c -gi): nvcc's own PTX of
# wide_any_line.cu (wide_any_line.sm_100a.ptx, as written: the two 8-byte __ldg of scales after the wait),
# and the SASS of the same PTX with those two loads (and their address arithmetic) moved above the wait
# by hand (wide_any_line.hoisted.sm_100a.ptx) -- the move ptxas itself makes in FlashMLA 9241ae3's sm100
# decode kernel (ModelType::MODEL1: LDG.E.64.CONSTANT at kernel.cuh:714 above the wait at 691), which it
# does not make in a kernel this small.
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_100a -O3 -lineinfo -ptx wide_any_line.cu -o wide_any_line.sm_100a.ptx
# (the file's name without this checkout's directory)
sed -i "s#\"$(pwd)/#\"#" wide_any_line.sm_100a.ptx
python3 - <<'PY'
L = open('wide_any_line.sm_100a.ptx').read().split('\n')
w = next(i for i, x in enumerate(L) if 'mbarrier.try_wait' in x)
end = next(i for i in range(w, len(L)) if L[i] == '\t// end inline asm')
lds = [i for i, x in enumerate(L) if 'ld.global.nc.u64' in x]
sts = [i for i, x in enumerate(L) if x.strip().startswith('st.shared.u64')]
# block 1: after the wait up to the first u64 load's '// end inline asm'; block 2: after the first
# st.shared up to the second load's; both go above the xor of the phase (the wait's set-up)
b1, b2 = (end + 1, lds[0] + 2), (sts[0] + 1, lds[1] + 2)
anchor = next(i for i in range(lds[0]) if i > 0 and 'xor.b32' in L[i]) - 1
new = L[:anchor] + L[b1[0]:b1[1]] + L[b2[0]:b2[1]] + L[anchor:b1[0]] + L[b1[1]:b2[0]] + L[b2[1]:]
open('wide_any_line.hoisted.sm_100a.ptx', 'w').write('\n'.join(new))
PY
ptxas -arch=sm_100a -O3 -lineinfo wide_any_line.hoisted.sm_100a.ptx -o /tmp/wide_any_line.hoisted.cubin
nvdisasm -c -gi /tmp/wide_any_line.hoisted.cubin > wide_any_line.hoisted.sm_100a.sass
