"""The litmus mnemonic tables: the qualifier and mnemonic spellings the builder reads and the
printer writes."""

from __future__ import annotations

from typing import Mapping

from ..ir import ArithOp, Cond, Proxy, RmwOp, Scope, Sem, Space

LOAD_BASES = {"ld": Proxy.GENERIC, "suld": Proxy.SURFACE, "tld": Proxy.TEXTURE, "cold": Proxy.CONSTANT}
STORE_BASES = {"st": Proxy.GENERIC, "sust": Proxy.SURFACE, "tst": Proxy.TEXTURE, "cost": Proxy.CONSTANT}
ATOM_BASES = {"atom": Proxy.GENERIC, "suatom": Proxy.SURFACE, "tatom": Proxy.TEXTURE, "coatom": Proxy.CONSTANT}
RED_BASES = {"red": Proxy.GENERIC, "sured": Proxy.SURFACE, "tred": Proxy.TEXTURE, "cored": Proxy.CONSTANT}
PROXY_PREFIX = {Proxy.GENERIC: "", Proxy.SURFACE: "su", Proxy.TEXTURE: "t", Proxy.CONSTANT: "co"}
BRANCHES = {"b" + c.value: c for c in Cond}
ARITH = {op.value: op for op in ArithOp}
MEMBAR = {"cta": Scope.CTA, "gl": Scope.GPU, "sys": Scope.SYS}
MNEMONICS = frozenset(
    {*LOAD_BASES, *STORE_BASES, *ATOM_BASES, *RED_BASES, *BRANCHES, *ARITH}
    | {"fence", "membar", "bar", "barrier", "mov", "goto", "filler"}
    | {"griddepcontrol", "mbarrier", "cp", "async", "tcgen05"}
)
GRIDDEP_ACTIONS = ("launch_dependents", "wait")
MBAR_ARRIVE_SEMS = {"release": Sem.RELEASE, "relaxed": Sem.RELAXED}
MBAR_WAIT_SEMS = {"acquire": Sem.ACQUIRE, "relaxed": Sem.RELAXED}
MBAR_SCOPES = {"cta": Scope.CTA, "cluster": Scope.CLUSTER}
BULK_COMPLETIONS = ("mbarrier", "bulk_group")
#: PTX spellings of the completion mechanism in the state-space form of cp{.reduce}.async.bulk
BULK_COMPLETION_SPELLINGS = {"mbarrier": "mbarrier", "mbarrier::complete_tx::bytes": "mbarrier", "bulk_group": "bulk_group"}
#: state-space qualifiers of copies (``.shared::cta``/``.shared::cluster`` are both a shared location here)
COPY_SPACES = {"global": Space.GLOBAL, "shared": Space.SHARED, "shared::cta": Space.SHARED, "shared::cluster": Space.SHARED}
TCGEN05_FENCES = ("before_thread_sync", "after_thread_sync")
LOC_KINDS = ("mbarrier",)  # "data" is the default and is not written
PLACEMENT_KEYS = ("cta", "gpu", "grid", "cluster", "warp")
#: the state-space qualifier of a distributed-shared-memory access (``ld``/``st``/``atom``/``red``/
#: ``mbarrier.arrive``): parser and printer read this one table
DSM_SPACE = "shared::cluster"
DSM_QUALIFIER: dict[str, Mapping[str, object]] = {"dsm": {DSM_SPACE: True}}
#: ``barrier.cluster`` modes and their semantics qualifiers (the first is the default)
CLUSTER_BARRIER_SEMS = {"arrive": {"release": Sem.RELEASE, "relaxed": Sem.RELAXED}, "wait": {"acquire": Sem.ACQUIRE}}
SEMS = {s.value: s for s in Sem}
SCOPES = {s.value: s for s in Scope}
RMW_OPS = {o.value: o for o in RmwOp}
CMP_PUNCT = {"==": "==", "=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
