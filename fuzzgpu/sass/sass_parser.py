"""The SASS parser: ``nvdisasm -c`` or ``cuobjdump -sass`` text -> functions of typed
instructions, memory operations, synchronisation instructions and loops (:func:`parse_sass`)."""

from __future__ import annotations

import dataclasses
import re

from .file_names import nvdisasm_file_name
from .cfg import sass_flows, successors
from .loops import back_edges
from .report import _int
from .sass_ir import SassFunction, SassInstr, SassLoop, SassMemOp, SassSync  # noqa: F401 -- read from here too

_set_attr = object.__setattr__
_new = object.__new__


_SASS_PRED_RE = re.compile(r"^@!?U?P(?:T|\d+)\s+")
_SASS_LOC_RE = re.compile(r'"([^"]*)", line (\d+)')
_SASS_TARGET_LABEL_RE = re.compile(r"\((\.L_[\w$]+)\)")
_SASS_HEX_RE = re.compile(r"0x([0-9a-fA-F]+)")
#: a vector element type of a multimem load (``F32x4``, ``BF16x8``...): element bits, elements
_SASS_VECTOR_MOD_RE = re.compile(r"[A-Z]+(\d+)x(\d+)")

_SASS_MEM = {
    "LDG": ("load", "global"), "STG": ("store", "global"),
    "LDS": ("load", "shared"), "STS": ("store", "shared"), "LDSM": ("load", "shared"), "STSM": ("store", "shared"),
    "LD": ("load", "generic"), "ST": ("store", "generic"),
    "LDL": ("load", "local"), "STL": ("store", "local"),
    "LDC": ("load", "constant"),
    "ATOMG": ("atomic", "global"), "REDG": ("reduction", "global"),
    "ATOMS": ("atomic", "shared"), "ATOM": ("atomic", "generic"), "RED": ("reduction", "generic"),
    # sm_90+/sm_100a: st.async, red.async (to a peer CTA's shared memory, completed through its
    # mbarrier; the address operand packs the data and mbarrier addresses) and st.bulk
    # (UMEMSETS.64 [UR8+0x10], URZ, UR4: the size in a uniform register) -- their own families
    "STAS": ("store", "cluster"), "REDAS": ("reduction", "cluster"), "UMEMSETS": ("store", "shared"),
    # multimem.ld_reduce (LDGMC.E.ADD.32.STRONG.SYS R4, [R10.64+URZ+0x4]); multimem.st and .red are STG and REDG
    "LDGMC": ("load", "global"),
}
#: bulk copies without a tensor map (cp{.reduce}.async.bulk, .prefetch) and with one (.tensor): two
#: token classes, so that a PTX tensor copy is never matched with a UBLKCP, nor a plain one with a UTMA*
_SASS_BULK = {"UBLKCP", "UBLKRED", "UBLKPF"}
_SASS_TMA = {"UTMALDG", "UTMASTG", "UTMAREDG", "UTMAPF", "UTMACCTL"}


_SASS_CBANK_RE = re.compile(r"c\[(0x[0-9a-f]+)\]\[([^\]]*)\]")
_SASS_BANK_RE = re.compile(r"c\[(0x[0-9a-f]+)\]")
_SASS_BRACKETS_RE = re.compile(r"\[([^\]]*)\]")
_SASS_TERM_SPLIT_RE = re.compile(r"\+(?=[^+])")
_SASS_NUMBER_RE = re.compile(r"-?0x[0-9a-fA-F]+|-?\d+")


def _sass_address(operands: str, opcode: str) -> tuple[str, int, tuple[str, ...]]:
    """(base register, immediate offset, the other registers) of a memory operation's address."""
    if opcode == "LDC":
        m = _SASS_CBANK_RE.search(operands)
        if not m:
            return ("", 0, ())
        terms = m.group(2)
        base = f"c{int(m.group(1), 16)}"
    else:
        groups = _SASS_BRACKETS_RE.findall(operands)
        # desc[URx][Ry.64+off]: the last group is the address
        if not groups:
            return ("", 0, ())
        terms = groups[-1]
        base = ""
    off = 0
    others: list[str] = []
    for t in _SASS_TERM_SPLIT_RE.split(terms.replace(" ", "")):
        if not t:
            continue
        if _SASS_NUMBER_RE.fullmatch(t):
            off += _int(t)
        elif t.split(".")[0] in ("RZ", "URZ"):  # (RZ.U32+UR4: LDGMC's zero register, typed)
            continue
        elif not base:
            base = t.split(".")[0]
        else:
            others.append(t.split(".")[0])
    return (base, off, tuple(others))


#: the opcodes :func:`_classify_sass` may classify (every other one is neither a memory operation nor
#: a synchronisation instruction)
_SASS_CLASSIFIED = frozenset(_SASS_MEM) | _SASS_BULK | _SASS_TMA | frozenset((
    "ACQBULK", "PREEXIT", "MEMBAR", "FENCE", "BAR", "SYNCS", "CCTL", "ERRBAR", "CGAERRBAR", "UCGABAR_ARV",
    "UCGABAR_WAIT", "UTMACMDFLUSH", "DEPBAR", "LDGDEPBAR", "LDGSTS"))


def _classify_sass(ins: SassInstr) -> SassMemOp | SassSync | None:
    op, mods = ins.opcode, ins.mods
    if op not in _SASS_CLASSIFIED:
        return None
    if op in _SASS_MEM:
        kind, space = _SASS_MEM[op]
        if op == "LDC":
            m = _SASS_BANK_RE.search(ins.operands)
            if not m or int(m.group(1), 16) == 0:
                return None  # kernel parameters and driver constants
        width = 32
        if op in ("LDSM", "STSM"):  # LDSM.16.M88.4: four 8x8 matrices, 32 bits of each per thread
            width = 32 * next((int(m) for m in reversed(mods) if m in ("1", "2", "4")), 1)
            mods = ()
        for mod in mods:
            if mod in ("U8", "S8", "8"):
                width = 8
            elif mod in ("U16", "S16", "16"):
                width = 16
            elif mod == "64":
                width = 64
            elif mod == "128":
                width = 128
            elif (vec := _SASS_VECTOR_MOD_RE.fullmatch(mod)) is not None:  # LDGMC.E.ADD.F32x4.RN: four 32-bit elements
                width = int(vec.group(1)) * int(vec.group(2))
        strength = ""
        if "STRONG" in mods:
            i = mods.index("STRONG")
            strength = mods[i + 1] if i + 1 < len(mods) else ""
        base, off, others = _sass_address(ins.operands, op)
        return SassMemOp(ins, kind, space, width, "CONSTANT" in mods, strength, "NA" in mods, "MMIO" in mods, base, off, others)
    if op == "ACQBULK":
        return SassSync(ins, "ACQBULK", "ACQBULK")
    if op == "PREEXIT":
        return SassSync(ins, "PREEXIT", "PREEXIT")
    if op == "MEMBAR":
        kind_ = "SC" if "SC" in mods else "ALL"
        scope = next((m for m in mods if m in ("CTA", "GPU", "SYS", "VC")), "GPU")
        return SassSync(ins, "MEMBAR", f"MEMBAR.{kind_}.{scope}")
    if op == "FENCE" and mods[:2] == ("VIEW", "ASYNC"):
        return SassSync(ins, "FENCE.VIEW.ASYNC", "FENCE.VIEW.ASYNC." + (mods[2] if len(mods) > 2 else ""))
    if op == "BAR":
        sub = mods[0] if mods else "SYNC"
        tok = {"SYNC": "BAR.SYNC", "ARV": "BAR.ARV", "RED": "BAR.RED"}.get(sub)
        return SassSync(ins, "BAR", tok)
    if op == "SYNCS":
        sub = mods[0] if mods else ""
        tok = {"EXCH": "SYNCS.EXCH", "PHASECHK": "SYNCS.PHASECHK"}.get(sub)
        if sub.startswith("ARRIVE"):
            tok = "SYNCS.ARRIVE"
        return SassSync(ins, "SYNCS", tok)
    if op == "CCTL" and "IVALL" in mods:
        return SassSync(ins, "CCTL.IVALL", "CCTL.IVALL")
    if op in ("ERRBAR", "CGAERRBAR"):
        return SassSync(ins, op, None)
    if op in ("UCGABAR_ARV", "UCGABAR_WAIT"):  # barrier.cluster.arrive / .wait
        return SassSync(ins, op, op)
    if op in _SASS_BULK:
        return SassSync(ins, "BULK", "BULK")
    if op == "UTMACCTL" and "IV" in mods:  # fence.proxy.tensormap::generic.acquire: the map's cached copy invalidated
        return SassSync(ins, "UTMACCTL.IV", "UTMACCTL.IV")
    if op in _SASS_TMA:
        return SassSync(ins, "TMA", "TMA")
    if op == "UTMACMDFLUSH":
        return SassSync(ins, "UTMACMDFLUSH", "UTMACMDFLUSH")
    if op == "DEPBAR":
        return SassSync(ins, "DEPBAR", "DEPBAR")
    if op == "LDGDEPBAR":
        return SassSync(ins, "LDGDEPBAR", "LDGDEPBAR")
    if op == "LDGSTS":
        return SassSync(ins, "LDGSTS", "LDGSTS")
    return None


#: the lines :func:`parse_sass` reads, in one pattern over the whole text after a newline, each
#: from the newline before it (searched for at C speed, where a ``^`` is tried at every position;
#: ``[^\S\n]``: a blank that is not a newline; a line is one of these or none):
_SASS_SCAN_RE = re.compile(
    # /*0a40*/ @P0 LDG.E R2, [R4] ; (the text up to the first ';', less the blanks before it: a
    # greedy run to the ';' that gives back only the blanks, not a lazy one that tries each character)
    r"\n[^\S\n]*(?:/\*(?P<off>[0-9a-fA-F]{4,})\*/[^\S\n]+(?P<ins>(?:[^;\n]*[^;\s])?)[^\S\n]*;"
    # //## File "F", line N inlined at "G", line M (nvdisasm -g/-gi): the lines of one run of them,
    # and the instruction line after them if one is (one match for the lot: they are half the lines)
    r"|(?P<file>//\#\# File [^\n]*(?:\n[^\S\n]*//\#\# File [^\n]*)*)"
    r"(?:\n[^\S\n]*/\*(?P<off2>[0-9a-fA-F]{4,})\*/[^\S\n]+(?P<ins2>(?:[^;\n]*[^;\s])?)[^\S\n]*;)?"
    r"|\.text\.(?P<fn>[\w$.]+):[^\S\n]*$"  # .text.KERNEL: (nvdisasm)
    r"|Function[^\S\n]*:[^\S\n]*(?P<fn2>[\w$.]+)[^\S\n]*$"  # Function : KERNEL (cuobjdump -sass)
    r"|(?P<lab>\.L_[\w$]+):[^\S\n]*$)"  # .L_x_12: (a branch target)
    r"|\n\$(?P<kern>[\w.]+)\$(?P<sub>[\w$.]+):[^\S\n]*$",  # $KERNEL$FUNC: (nvdisasm: a device function)
    re.M)


def _file_locs(raw: str, loc_of: dict[str, tuple[tuple[str, int], ...]]) -> tuple[tuple[str, int], ...]:
    """The ``(file, line)`` locations a ``//## File`` line names, innermost first (``loc_of``: memo)."""
    locs = loc_of.get(raw)
    if locs is None:
        locs = loc_of[raw] = tuple((nvdisasm_file_name(f), int(n)) for f, n in _SASS_LOC_RE.findall(raw))
    return locs


def parse_sass(text: str) -> tuple[SassFunction, ...]:
    """Parse ``nvdisasm -c`` or ``cuobjdump -sass`` output into functions.  A device function that
    was not inlined is listed by nvdisasm inside the text of each kernel that calls it, after a
    ``$KERNEL$FUNC:`` label: it becomes a function of its own (``container`` names the kernel).

    One scan of the text (:data:`_SASS_SCAN_RE`) finds the lines it reads: instructions, source
    locations, function headers, labels; every other line is skipped unread."""
    funcs: list[tuple[str, list[tuple[int, int, str, tuple[tuple[str, int], ...]]], dict[str, int], str]] = []
    pending: list[str] = []
    kernel = ""
    # source locations (nvdisasm -g / -gi): the one in force at each instruction line
    src: tuple[tuple[str, int], ...] = ()
    chained = False  # the comments since the last instruction named an inlining chain
    loc_of: dict[str, tuple[tuple[str, int], ...]] = {}  # the locations of a //## File line (they repeat)
    # a run of //## File lines: the locations of each, and the lines it spans (runs repeat too)
    blocks: dict[str, tuple[tuple[tuple[tuple[str, int], ...], ...], int]] = {}
    rows: list[tuple[int, int, str, tuple[tuple[str, int], ...]]] = []
    lineno, pos = 1, 0
    count = text.count
    # (a match starts at the newline before its line: the newlines before it are counted from the
    # one before the last match's line, as many as from that line's start)
    for m in _SASS_SCAN_RE.finditer("\n" + text):
        start = m.start()
        lineno += count("\n", pos, start)
        pos = start
        off_hex, ins, block, off2, ins2, fn, fn2, lab, kern, sub = m.groups()
        line = lineno
        if block is not None:
            # nvdisasm -gi: one line per inlining level ("F:112 inlined at G:879", "G:879 inlined at
            # H:1171", then the outermost "H:1171" alone), innermost first
            read = blocks.get(block)
            if read is None:
                read = blocks[block] = (tuple(_file_locs(raw.lstrip(), loc_of) for raw in block.split("\n")),
                                        block.count("\n") + 1)
            for locs in read[0]:
                if len(locs) > 1 and chained and src and src[-1] == locs[0]:
                    src = src + locs[1:]
                elif locs and (len(locs) > 1 or not chained):
                    src, chained = locs, len(locs) > 1
            if ins2 is None:
                continue
            off_hex, ins, line = off2, ins2, lineno + read[1]  # the instruction line after them
        if ins is not None:  # an instruction line
            if funcs:
                off = int(off_hex, 16)
                rows.append((line, off, ins, src))
                chained = False
                if pending:
                    for lab in pending:
                        funcs[-1][2][lab] = off
                    pending = []
            continue
        if sub is not None:
            if kern == kernel:
                rows = []
                funcs.append((sub, rows, {}, kernel))
                pending = []
            continue
        name = fn or fn2
        if name is not None:
            if not funcs or funcs[-1][0] != name:
                rows = []
                funcs.append((name, rows, {}, ""))
            kernel = name
            pending = []
            continue
        pending.append(lab)
    memo: dict[str, _Parsed] = {}
    return tuple(dataclasses.replace(_build_sass_function(name, rows, labels, memo), container=container)
                 for name, rows, labels, container in funcs)


#: what :func:`_build_sass_function` reads from an instruction's text alone: the text with its
#: blanks normalised, the predicate, the opcode, its modifiers, the operands, what
#: :func:`_classify_sass` makes of it (None; or the class, SassMemOp or SassSync, and its fields
#: but the instruction), and its :data:`_FLOW` bits
_Parsed = tuple[str, str, str, tuple[str, ...], str, "tuple[type, dict] | None", int]

#: the bits of what an instruction's text says :func:`_build_sass_function` must look at (0: none):
#: classified (a memory operation or a synchronisation), reads the clock, an unconditional EXIT or
#: RET, a branch that may run, predicated on !PT (never runs)
_CLASSIFIED, _CLOCK, _EXIT, _BRANCH, _NEVER = 1, 2, 4, 8, 16


def _parse_text(text: str) -> _Parsed:
    pred = ""
    body = text
    if text[:1] == "@":
        m = _SASS_PRED_RE.match(text)
        if m:
            pred = m.group(0).strip()
            body = text[m.end():]
    parts = body.split(None, 1)
    pieces = (parts[0] if parts else "").split(".")
    op = pieces[0]
    norm, mods, operands = " ".join(text.split()), tuple(pieces[1:]), parts[1] if len(parts) > 1 else ""
    how = None
    if op in _SASS_CLASSIFIED:
        c = _classify_sass(SassInstr(0, 0, 0, norm, pred, op, mods, operands, True))
        if c is not None:  # its fields but the instruction, by name (in the order of its fields)
            how = (type(c), {k: v for k, v in c.__dict__.items() if k != "instr"})
    flow = ((_CLASSIFIED if how is not None else 0) | (_CLOCK if "SR_CLOCK" in operands else 0)
            | (_NEVER if pred == "@!PT" else 0))
    if (op == "EXIT" or op == "RET") and not pred:
        flow |= _EXIT
    elif (op == "BRA" or op == "JMP") and pred != "@!PT":
        flow |= _BRANCH
    return norm, pred, op, mods, operands, how, flow


def _build_sass_function(name: str, rows: list[tuple[int, int, str, tuple[tuple[str, int], ...]]],
                         labels: dict[str, int] | None = None, memo: dict[str, _Parsed] | None = None) -> SassFunction:
    """One function from its instruction lines: ``(line, offset, text, source location)``.  What an
    instruction's text alone says (:func:`_parse_text`) is read once per text (``memo``: for the
    functions of one listing; most texts repeat: inlined copies, instantiations of a template)."""
    labels = labels or {}
    memo = {} if memo is None else memo
    instrs = []
    mem_ops: list[SassMemOp] = []
    syncs: list[SassSync] = []
    after_exit = False
    by_offset: dict[int, int] = {}
    # the indices of the busy instructions (a memory operation or a synchronisation) and of those
    # that read the clock: a loop whose body holds none of the first is a delay loop
    busy: list[int] = []
    clocks: list[int] = []
    branches = []
    for i, (line, off, text, src) in enumerate(rows):
        got = memo.get(text)
        if got is None:
            got = memo[text] = _parse_text(text)
        norm, pred, op, mods, operands, how, flow = got
        # off the main line: after the first unconditional EXIT (a device function's first
        # unconditional RET), or predicated on !PT (never runs)
        # (SassInstr's fields as its __init__ sets them, without the call)
        ins = _new(SassInstr)
        _set_attr(ins, "__dict__", {"index": i, "offset": off, "line": line, "text": norm, "predicate": pred, "opcode": op,
                                    "mods": mods, "operands": operands, "mainline": not after_exit and not flow & _NEVER,
                                    "src": src})
        instrs.append(ins)
        by_offset[off] = i
        if flow:
            if how is not None:
                busy.append(i)
                # (its fields as they are: the frozen dataclass's __init__ sets them one at a time)
                made: SassMemOp | SassSync = _new(how[0])
                _set_attr(made, "__dict__", {"instr": ins, **how[1]})
                if isinstance(made, SassMemOp):
                    mem_ops.append(made)
                else:
                    syncs.append(made)
            if flow & _CLOCK:
                clocks.append(i)
            if flow & _EXIT:
                after_exit = True
            elif flow & _BRANCH:
                branches.append(ins)
    back = []  # the backward branches: (branch, target)
    for ins in branches:
        lm = _SASS_TARGET_LABEL_RE.search(ins.operands)
        m = _SASS_HEX_RE.search(ins.operands)
        target = labels.get(lm.group(1)) if lm else (int(m.group(1), 16) if m else None)
        if target is None:
            continue
        if target == ins.offset and not ins.predicate:
            continue  # the end-of-function self loop
        head = by_offset.get(target)
        if head is not None and head <= ins.index:
            back.append((ins.index, head))
    fn = SassFunction(name, tuple(instrs), tuple(mem_ops), tuple(syncs), (), labels=tuple(labels.items()))
    if not back:
        return fn
    # each loop is its natural loop on the function's control-flow graph (cfg.sass_flows, loops.back_edges),
    # not the listing between the branch and its target: ptxas may place a loop's blocks anywhere
    succs = successors(sass_flows(fn))
    at_busy, at_clock = set(busy), set(clocks)
    return dataclasses.replace(fn, loops=tuple(SassLoop(head, bra, not at_clock.isdisjoint(body), at_busy.isdisjoint(body))
                                               for bra, head, body in back_edges(succs, back)))
