#!/bin/sh
# Rebuilds the "line tables are coarse" reproducer: nvcc's own PTX of wide_any_line.cu
# (wide_any_line.ptx, as written: the 8-byte __ldg of scales after the wait), and a cubin of the
# same PTX with the two scale loads (and their address arithmetic) moved above the wait -- what
# ptxas itself does in FlashMLA sm100 decode head64 model1 (SASS cdc0/ce00, kernel.cuh:714 vs 691).
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_100a -O3 -lineinfo -ptx wide_any_line.cu -o wide_any_line.ptx
python3 - <<'PY'
L=open('wide_any_line.ptx').read().split('\n')
w=next(i for i,x in enumerate(L) if 'mbarrier.try_wait' in x)
end=next(i for i in range(w,len(L)) if L[i]=='\t// end inline asm')
beg=max(i for i in range(w) if L[i]=='\t// begin inline asm')
lds=[i for i,x in enumerate(L) if 'ld.global.nc.u64' in x]
sts=[i for i,x in enumerate(L) if x.strip().startswith('st.shared.u64')]
# block 1: after the wait up to the first u64 load's '// end inline asm'; block 2: after the first st.shared up to the second load's end
b1=(end+1, lds[0]+2); b2=(sts[0]+1, lds[1]+2)
loc=beg-1
while not L[loc].strip().startswith('.loc'): loc-=1
# hoist both blocks above the .loc that precedes the wait's set-up (the xor of the phase)
anchor=next(i for i in range(lds[0]) if i>0 and 'xor.b32' in L[i] )-1
new=L[:anchor]+L[b1[0]:b1[1]]+L[b2[0]:b2[1]]+L[anchor:b1[0]]+L[b1[1]:b2[0]]+L[b2[1]:]
open('wide_any_line.hoisted.ptx','w').write('\n'.join(new))
PY
ptxas -arch=sm_100a -O3 -lineinfo wide_any_line.hoisted.ptx -o wide_any_line.hoisted.cubin
PYTHONPATH=/work/main python3 -m fuzzgpu sass --arch sm_100a --details wide_any_line.hoisted.cubin --ptx wide_any_line.ptx
