#!/bin/sh
# Rebuilds coarse_rows' captured PTX and SASS (nvcc/ptxas 13.0.88, nvdisasm -c -gi): nvcc's own PTX of
# coarse_rows.cu (coarse_rows.sm_100a.ptx, as written: line 18's __ldg after the wait), and the SASS of the
# same PTX with that load (and its address) moved above the wait by hand, placed after line 16's load
# (coarse_rows.after.sm_100a.sass) or before it (coarse_rows.before.sm_100a.sass).  Either way ptxas
# issues the two LDGs back to back, under one line-table row: the first one's, inlining chain included.
set -e
cd "$(dirname "$0")"
nvcc -arch=sm_100a -O3 -lineinfo -ptx coarse_rows.cu -o coarse_rows.sm_100a.ptx
# (the file's name without this checkout's directory)
sed -i "s#\"$(pwd)/#\"#" coarse_rows.sm_100a.ptx
python3 - <<'PY'
L = open('coarse_rows.sm_100a.ptx').read().split('\n')
ends = [i for i, x in enumerate(L) if x == '\t// end inline asm']  # line 16's load, the wait, line 18's load
add = next(i for i, x in enumerate(L) if x.strip().startswith('add.s64') and '%rd1, 4' in x)
blk = (add - 1, ends[2] + 1)  # line 18's '.loc', its address, its load
first = next(i for i, x in enumerate(L) if '.loc\t2 112' in x) - 1  # line 16's '.loc' before its load
rest = L[:blk[0]] + L[blk[1]:]
for name, at in (('after', ends[0] + 1), ('before', first)):
    open(f'/tmp/coarse_rows.{name}.ptx', 'w').write('\n'.join(rest[:at] + L[blk[0]:blk[1]] + rest[at:]))
PY
for v in after before; do
  ptxas -arch=sm_100a -O3 -lineinfo /tmp/coarse_rows.$v.ptx -o /tmp/coarse_rows.$v.cubin
  nvdisasm -c -gi /tmp/coarse_rows.$v.cubin > coarse_rows.$v.sm_100a.sass
done
