"""Kernel names a person reads: demangled by a kept demangler (the ``cxxfilt`` package, which calls
the C++ runtime's ``abi::__cxa_demangle``; else the toolkit's ``cu++filt`` or binutils' ``c++filt``
when on PATH), then shortened -- and kept apart: two instantiations of one template (bf16 and fp16)
never print the same name."""

from __future__ import annotations

import functools
import hashlib
import re
from typing import Iterable

#: a display name longer than this elides the template arguments its instantiations share
LONG = 90


#: demanglers on PATH, tried in order when the C++ runtime's refuses a name: the toolkit's, LLVM's
#: (which reads CUTLASS's enum template arguments that libstdc++ and binutils 2.40 refuse), binutils'
_TOOLS = ("cu++filt", "llvm-cxxfilt", "c++filt")


@functools.lru_cache(maxsize=4096)
def demangle(name: str) -> str:
    """The C++ name of a mangled symbol (``_Z...``); an unmangled name (``extern "C"``), or one no
    demangler reads, as it is."""
    if not name.startswith("_Z"):
        return name
    try:
        import cxxfilt  # type: ignore[import-untyped,import-not-found]

        return str(cxxfilt.demangle(name))
    except ImportError:
        pass
    except Exception:  # noqa: BLE001 -- cxxfilt.InvalidName: the runtime's demangler refuses it
        pass
    from .toolchain import demangle_with_tools  # the one module that runs programs

    return demangle_with_tools(name, _TOOLS) or name


def _top_level_split(text: str, sep: str = ",") -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in text:
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur).strip())
    return out


def split_name(demangled: str) -> tuple[str, list[str] | None]:
    """``void ns::k<A, B>(int*)`` -> (``ns::k``, [``A``, ``B``]); no template -> (``ns::k``, None)."""
    s = demangled
    if s.endswith(")"):  # drop the parameter list: the last top-level (...)
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    args = None
    if s.endswith(">"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {">": 1, "<": -1}.get(s[i], 0)
            if depth == 0:
                args = _top_level_split(s[i + 1:-1])
                s = s[:i]
                break
    head = _top_level_split(s, " ")
    return head[-1], args


def _unqualify(text: str) -> str:
    """``cutlass::bfloat16_t`` -> ``bfloat16_t``; ``(anonymous namespace)::`` dropped."""
    text = text.replace("(anonymous namespace)::", "")
    return re.sub(r"\b(?:[A-Za-z_]\w*::)+(?=[A-Za-z_~])", "", text)


def display_names(mangled: Iterable[str]) -> dict[str, str]:
    """A short readable name per symbol, distinct for distinct symbols.

    Template arguments lose their namespaces; when the name is still long, the arguments that all
    instantiations of the template share become ``…`` and the ones that tell them apart stay
    (``flash_fwd_splitkv_mla_kernel<bfloat16_t, …>``).  A clash left after that gets the symbol's
    hash (``#1a2b3c``)."""
    names = sorted(set(mangled))
    parts = {m: split_name(demangle(m)) for m in names}
    groups: dict[str, list[str]] = {}
    for m, (base, _) in parts.items():
        groups.setdefault(base, []).append(m)
    out: dict[str, str] = {}
    for base, members in groups.items():
        short_base = _unqualify(base)
        arglists = {m: [_unqualify(a) for a in (parts[m][1] or [])] for m in members}
        for m in members:
            args = arglists[m]
            if parts[m][1] is None:
                out[m] = short_base
                continue
            full = f"{short_base}<{', '.join(args)}>"
            if len(full) <= LONG:
                out[m] = full
                continue
            others = [arglists[o] for o in members if o != m and len(arglists[o]) == len(args)]
            out[m] = f"{short_base}<{', '.join(_elide(args, others))}>"
    seen: dict[str, list[str]] = {}
    for m, d in out.items():
        seen.setdefault(d, []).append(m)
    for d, ms in seen.items():
        if len(ms) > 1:
            # kernels of one name in different namespaces (a::k, b::k): their namespaces tell them apart;
            # overloads: their parameter lists; else the symbol's hash
            short = _unqualify(parts[ms[0]][0])
            qualified = {m: parts[m][0].replace("(anonymous namespace)::", "") + d[len(short):] for m in ms}
            withp = {m: d + _params(demangle(m)) for m in ms}
            for m in ms:
                out[m] = (qualified[m] if len(set(qualified.values())) == len(ms)
                          else withp[m] if len(set(withp.values())) == len(ms)
                          else f"{d}#{hashlib.sha1(m.encode()).hexdigest()[:6]}")
    return out


def _template(text: str) -> tuple[str, list[str]] | None:
    """``name<a, b>`` -> (``name``, [``a``, ``b``]); anything else -> None."""
    if not text.endswith(">") or "<" not in text:
        return None
    head = text[: text.index("<")]
    inner = text[len(head) + 1:-1]
    args = _top_level_split(inner)
    return (head, args) if f"{head}<{', '.join(args)}>" == text or ", ".join(args) == inner.strip() else None


def _elide(args: list[str], others: list[list[str]], depth: int = 0) -> list[str]:
    """``args`` with what every other instantiation in ``others`` shares at the same place made
    ``…`` (a run of them one ``…``), descending into template arguments that differ, so that the
    part that tells them apart shows (``device_kernel<Combine<tuple<C<16>, …>, …, float, …>>``);
    once the arguments so far tell it apart from every other, the rest is ``…``.
    With no others (a lone instantiation) every argument stays, clipped to 40 characters."""
    kept: list[str] = []
    alike = list(others)  # the others that agree with every argument so far
    for i, a in enumerate(args):
        if others and not alike:  # the arguments so far already tell it apart: the rest is …
            kept.append("…")
            break
        peers = [o[i] for o in alike]
        alike = [o for o in alike if o[i] == a]
        if others and all(p == a for p in peers):
            kept.append("…")
            continue
        t = _template(a)
        sub = [_template(p) for p in peers]
        if others and depth < 4 and t and all(x is not None and x[0] == t[0] and len(x[1]) == len(t[1]) for x in sub):
            inner = _elide(t[1], [x[1] for x in sub if x is not None], depth + 1)
            kept.append(f"{t[0]}<{', '.join(inner)}>")
        else:
            kept.append(a if len(a) <= 40 else a[:37] + "...")
    squeezed: list[str] = []
    for a in kept:  # one … for a run of shared arguments
        if not (a == "…" and squeezed and squeezed[-1] == "…"):
            squeezed.append(a)
    return squeezed


def _params(demangled: str) -> str:
    """The parameter list of a demangled function name, without namespaces: ``(int*)``."""
    if not demangled.endswith(")"):
        return ""
    depth = 0
    for i in range(len(demangled) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(demangled[i], 0)
        if depth == 0:
            return _unqualify(demangled[i:])
    return ""


def display_name(mangled: str, context: Iterable[str] = ()) -> str:
    """:func:`display_names` of ``mangled`` among the other symbols of ``context``."""
    return display_names([mangled, *context])[mangled]
