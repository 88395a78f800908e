"""rejudge.py CODEDIR PTX SASS ARCH: the analysis of a code tree (git archive of fuzzgpu/) on a kept pair."""
import collections
import json
import re
import sys
import time

sys.path.insert(0, sys.argv[1])
from fuzzgpu.sass import toolchain  # noqa: E402 -- the code tree given

ptx, sass, arch = open(sys.argv[2]).read(), open(sys.argv[3]).read(), sys.argv[4]
t=time.process_time()
rep = toolchain.analysed(ptx, sass, arch, sys.argv[5] if len(sys.argv) > 5 else "x.cu")
c = collections.Counter((f.check, f.verdict) for f in rep.findings)
unk = collections.Counter()
for fn in rep.functions:
    for u in fn.unchecked:
        m = re.search(r"\): (.*)$", u)
        unk[(u.split('`')[1].split(' ')[0] if '`' in u else u[:60]) + ' :: ' + (m.group(1)[:70] if m else '')] += 1
print(json.dumps({"functions": len(rep.functions), "complete": rep.complete, "mod_unchecked": list(rep.unchecked),
  "incomplete_functions": sum(1 for f in rep.functions if not f.complete),
  "findings": {f"{a}/{b}": n for (a, b), n in c.items()},
  "finding_lines": sorted({f"{f.check}/{f.verdict} {f.src_file.split('/')[-1]}:{f.src_line} {f.op_sass}@{f.op_sass_offset:04x} vs {f.sync_sass}" for f in rep.findings}),
  "unchecked": dict(unk), "pdl_review": len(rep.pdl), "cpu": round(time.process_time()-t, 2)}, indent=1))
