"""The generator's tensor copies on a GPU: draws with a ``cp.async.bulk.tensor`` from the profiles
``proxy`` (each distinct templated TMA shape with one) and ``all`` (``--n`` general-generator draws),
written as litmus files here, then each parsed back and judged on the GPU machine as a campaign
judges a draw: the cuda backend with every program also checked in its SASS, the model property,
and a failure's class against the shipped known list.

Two steps, so that the programs are fixed before the GPU sitting::

    python3 bench/tensor_draws.py draw --out bench/results/tensor/h200-tensor-copies/tensor-draws --n 30
    python3 bench/tensor_draws.py run bench/results/tensor/h200-tensor-copies/tensor-draws --out DIR --instances 1e7

``draw`` writes ``NN-<profile>.litmus`` and ``manifest.json`` (per program: its profile and the
tensor copy's direction).  ``run`` writes ``tensor-draws.json`` and ``tensor-draws.md``: per program
the instances, the weak (allowed, not SC) ones, timeouts, the model property's verdict and, for a
failure, its class and whether ``corpus/known.json`` names it.  Exit status 1 when a failure is in a
class the known list does not name, 3 when a program could not be checked, else 0.  ``--backend sim``
checks the script without a GPU (plumbing only: the sim samples the oracle it then checks).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def draw(out: Path, n: int, seed: int) -> int:
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from fuzzgpu import codegen, strategies
    from fuzzgpu.ir import CpAsyncBulk, Space
    from fuzzgpu.litmus import format_program

    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, dict[str, Any]] = {}
    # every distinct one of the proxy profile's templated TMA shapes (ten have a tensor copy), n of all's
    for profile, want in (("proxy", 10), ("all", n)):
        got: list[tuple[str, Any]] = []

        @hseed(seed)
        @settings(max_examples=4000, deadline=None, suppress_health_check=list(HealthCheck), database=None,
                  phases=[Phase.generate])
        @given(strategies.programs(profile))
        def collect(p: Any) -> None:
            tensor = [i for t in p.threads for i in t.code if isinstance(i, CpAsyncBulk) and i.tensor]
            if len(got) >= want or not tensor or codegen.unrunnable_reasons(p):
                return
            text = format_program(p)
            if text in seen or any(text == g for g, _ in got):
                return
            space = {loc.name: loc.space for loc in p.locations}[tensor[0].dst_loc]
            got.append((text, {"profile": profile, "copy": "load" if space is Space.SHARED else "store"}))

        collect()
        for text, info in got:
            name = f"{len(seen):02d}-{profile}.litmus"
            (out / name).write_text(text)
            seen[name] = info
    (out / "manifest.json").write_text(json.dumps(seen, indent=1, sort_keys=True) + "\n")
    print(f"{len(seen)} programs with a tensor copy in {out}")
    return 0 if sum(1 for v in seen.values() if v["profile"] == "all") == n else 3


def _weak(p: Any, h: Any) -> int:
    """Instances whose outcome the oracle allows though no interleaving produces it."""
    from fuzzgpu import model

    return sum(c for o, c in h.counts if model.judge(p, dict(o)).verdict in ("allowed", "allowed-outside-model"))


def run(src: Path, out: Path, instances: int, backend_name: str) -> int:
    """Each program of ``src`` through what a campaign does with a draw: the backend
    (``make_backend``: on cuda every program is also checked in its SASS), the model property
    (:func:`fuzzgpu.properties.check`), and for a failure its class (``verdict_class``) against
    the shipped known list (``corpus/known.json``, ``match_known``)."""
    from fuzzgpu import litmus, model, properties
    from fuzzgpu.backends import make_backend
    from fuzzgpu.backends.base import RunConfig
    from fuzzgpu.corpus import load_known, match_known, verdict_class
    from fuzzgpu.errors import EnvError, UserError

    manifest = json.loads((src / "manifest.json").read_text())
    known = load_known(Path(__file__).resolve().parent.parent / "corpus" / "known.json")
    backend, note = make_backend(backend_name)
    print(note, flush=True)
    rows = []
    try:
        for name, info in sorted(manifest.items()):
            p = litmus.parse_file(src / name)  # the parser reads what the printer wrote
            row: dict[str, Any] = {"program": name, **info}
            try:
                h = backend.run(p, RunConfig(instances=instances))
                v = properties.check("model", p, h)
            except (UserError, EnvError, model.Unsupported) as e:
                row["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            else:
                row.update(instances=h.instances, timeouts=h.timeouts, weak=_weak(p, h), verdict=v.status,
                           faults=v.faults, kinds=list(v.kinds))
                if v.failed:
                    key = verdict_class(p.name, v)
                    k = match_known(key, known)
                    row.update({"class": key, "known": k.title if k is not None else None})
            rows.append(row)
            print(f"{name:20s} {info['copy']:5s} " + (row.get("error") or
                  f"{row['verdict']} instances {row['instances']} weak {row['weak']} faults {row['faults']} "
                  f"timeouts {row['timeouts']}" + (f" class {row['class']} ({'known' if row['known'] else 'NEW'})"
                                                   if "class" in row else "")), flush=True)
    finally:
        close = getattr(backend, "close", None)
        if close is not None:
            close()
    out.mkdir(parents=True, exist_ok=True)
    (out / "tensor-draws.json").write_text(json.dumps({"backend": note, "rows": rows}, indent=1) + "\n")
    L = [f"backend: {note}", "", "| program | profile | copy | instances | weak | verdict | class | known |",
         "|---|---|---|---|---|---|---|---|"]
    for w in rows:
        L.append(f"| {w['program']} | {w['profile']} | {w['copy']} | " + (f"error: {w['error']} | | | | |" if "error" in w else
                 f"{w['instances']} | {w['weak']} | {w['verdict']} | {w.get('class', '')} | "
                 f"{'yes' if w.get('known') else ('NO' if 'class' in w else '')} |"))
    (out / "tensor-draws.md").write_text("\n".join(L) + "\n")
    new = [w for w in rows if "class" in w and not w["known"]]
    unchecked = [w for w in rows if "error" in w or w.get("verdict") == "unsupported"]
    print(f"{len(rows)} programs: {sum(1 for w in rows if w.get('weak'))} showed an allowed weak outcome, "
          f"{sum(1 for w in rows if w.get('verdict') == 'fail')} failed the model property "
          f"({len(new)} in a class the known list does not name), {len(unchecked)} not checked")
    return 1 if new else (3 if unchecked else 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    d = sub.add_parser("draw", help="write the draws as litmus files (no GPU)")
    d.add_argument("--out", type=Path, required=True)
    d.add_argument("--n", type=int, default=30)
    d.add_argument("--seed", type=int, default=8)
    r = sub.add_parser("run", help="run each on the GPU with fuzzgpu run --json")
    r.add_argument("src", type=Path)
    r.add_argument("--out", type=Path, required=True)
    r.add_argument("--instances", type=lambda t: int(float(t)), default=10_000_000)
    r.add_argument("--backend", default="cuda", choices=("cuda", "sim"),
                   help="cuda (default); sim checks this script without a GPU (it samples the oracle it then checks)")
    a = ap.parse_args(argv)
    if a.step == "draw":
        return draw(a.out, a.n, a.seed)
    return run(a.src, a.out, a.instances, a.backend)


if __name__ == "__main__":
    sys.exit(main())
