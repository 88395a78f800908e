"""PTX text before it is parsed: comments and line directives taken out, the source location of
each line (``.loc``/``.file``, with inlining chains), functions found, bodies split into statements
with their labels and ``{ }`` scopes (:mod:`fuzzgpu.sass.ptx_parser` reads these)."""

from __future__ import annotations

import functools
import itertools
import re
from typing import TYPE_CHECKING, Callable, Collection, Sequence

from .file_names import ptx_file_name
from .loops import written_and_read_after
from .report import _int

if TYPE_CHECKING:
    from .ptx_ir import PtxInstr

#: an address operand's text (``[%rd1+16]``, ``[sym]``, ``[-8]``): its root and its offset
_ADDRESS_RE = re.compile(r"([%\w$.]+)?(?:\+?(-?(?:0x[0-9a-fA-F]+|\d+)))?")
#: an immediate operand
IMMEDIATE_RE = re.compile(r"-?(0x[0-9a-fA-F]+|\d+)")


@functools.lru_cache(maxsize=4096)  # (an operand's text alone: addresses repeat)
def operand_address(operand: str) -> tuple[str, int]:
    """``(root, offset)`` of an address operand (``[%rd1+16]`` -> ``("%rd1", 16)``; an immediate address's root is ``""``)."""
    inner = operand.strip()
    if inner.startswith("[") and inner.endswith("]"):
        inner = inner[1:-1]
    inner = inner.replace(" ", "")
    m = _ADDRESS_RE.fullmatch(inner)
    if not m:
        return (inner, 0)
    root = m.group(1) or ""
    off = _int(m.group(2)) if m.group(2) else 0
    if root and IMMEDIATE_RE.fullmatch(root):
        return ("", _int(root) + off)
    return (root, off)


_PTX_FUNC_RE = re.compile(r"^\s*(?:\.visible\s+|\.extern\s+|\.weak\s+)*\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)")
_PTX_LABEL_RE = re.compile(r"^([\w$]+):\s*")
_BRACE_RE = re.compile(r"[{}]")


def _strip_ptx_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


#: a ``.loc`` or ``.file`` line, from the newline before it (a pattern that starts with a character
#: is searched for at C speed; one that starts with ``^`` is tried at every position of the text)
_PTX_LINE_DIRECTIVE_RE = re.compile(r"\n[ \t]*\.(?:loc|file)\b[^\n]*")


def _strip_line_directives(text: str) -> str:
    """Blank out ``.loc`` and ``.file`` (``nvcc -lineinfo``/``-G``): they end at the end of the line,
    not at a ``;``, so left in they would swallow the statement that follows (PTX ISA, Debugging
    Directives).  (A newline before the text: its first line is a line after a newline too.)"""
    return _PTX_LINE_DIRECTIVE_RE.sub("\n", "\n" + text)[1:]


#: ``.file N "NAME"`` anywhere: :func:`source_lines` keeps those with only blanks before them on their line
_PTX_FILE_RE = re.compile(r'\.file\s+(\d+)\s+"([^"]*)"')
_PTX_INLINED_AT_RE = re.compile(r"inlined_at\s+(\d+)\s+(\d+)\s+(\d+)")


#: the lines :func:`source_lines` reads, in one pattern over the whole text (from the newline before
#: each: see :data:`_PTX_LINE_DIRECTIVE_RE`): a ``.loc`` (groups 1-4) or the start of a function
#: (``[^\S\n]``: a blank that is not a newline)
_PTX_LOC_SCAN_RE = re.compile(
    r"\n(?:[ \t]*\.loc[^\S\n]+(\d+)[^\S\n]+(\d+)[^\S\n]+(\d+)([^\n]*)$"
    r"|[^\S\n]*\.(?:entry|func)\b|[^\S\n]*\.visible[^\S\n]+\.(?:entry|func)\b)", re.M)

_Src = tuple[tuple[str, int], ...]

#: the file numbers (``.file N``, ``.loc N``, ``inlined_at N``) of one PTX module in a join: each module
#: numbers its files from 1
_FILE_NUMBER_RE = re.compile(r"(\.file[^\S\n]+|\.loc[^\S\n]+|inlined_at[^\S\n]+)(\d+)")
#: the numbers of the k-th module joined start at k times this (a module names far fewer files)
_JOIN_STRIDE = 1_000_000


def join_modules(texts: Sequence[str]) -> str:
    """Several PTX modules as one text to compare a device-linked cubin with (``fuzzgpu sass --ptx A
    --ptx B``): each module's file numbers moved to a range of their own (every module numbers its
    ``.file`` from 1, and one table of the joined text would give a later module's names to an
    earlier module's lines), the texts one after the other."""
    if len(texts) == 1:
        return texts[0]
    return "\n".join(_renumber_files(t, k * _JOIN_STRIDE) for k, t in enumerate(texts))


def _renumber_files(text: str, offset: int) -> str:
    """``text`` with ``offset`` added to every file number of its ``.file``, ``.loc`` and ``inlined_at``."""
    def moved(m: re.Match[str]) -> str:
        return f"{m.group(1)}{offset + int(m.group(2))}"

    return _FILE_NUMBER_RE.sub(moved, text) if offset else text


def source_lines(text: str) -> Callable[[int], _Src]:
    """For a line of ``text`` (1-based) after a ``.loc``, the source location in force there,
    innermost first: ``((file, line), (call site), (its call site), ...)`` (PTX ISA, Debugging
    Directives: ``.loc``, ``.file``; ``inlined_at``).  A ``.loc`` names only its immediate call site;
    that call site's own chain is the one of the last ``.loc`` of that file, line and column (nvcc
    writes the call's ``.loc`` before the callee's).  ``()`` for a ``.loc`` line itself, on a
    function's first line and before the next ``.loc``, and everywhere when the PTX has no line
    information.  One scan of the text finds the ``.loc`` lines and the function starts; a line's
    location is the one after the last of them at or before it (a table of the lines)."""
    files = {m.group(1): ptx_file_name(m.group(2)) for m in _PTX_FILE_RE.finditer(text)
             if not text[text.rfind("\n", 0, m.start()) + 1:m.start()].strip(" \t")}
    if not files:
        return lambda line: ()
    # the location of each line (index: the line, 1-based), filled up to the line of each .loc and
    # function start as the scan reaches it; past the last of them, the location it left
    table: list[_Src] = [()]
    cur: _Src = ()
    chain_at: dict[tuple[str, str, str], _Src] = {}
    #: what a .loc line's text alone says (its file, line and column; its location, or None for
    #: line 0; its call site's key and location, or None): most lines repeat (an inlined body)
    read: dict[str, tuple[tuple[str, str, str], tuple[str, int] | None, tuple[str, str, str] | None, tuple[str, int]]] = {}
    n, pos = 1, 0
    count = text.count
    # (the text after a newline: a match starts at the newline before its line, at the index in
    # ``text`` of its line's start; the newlines before it are those of the text up to there, as
    # counted from the one before the last match's line)
    for m in _PTX_LOC_SCAN_RE.finditer("\n" + text):
        n += count("\n", pos, m.start())
        pos = m.start()
        table.extend([cur] * (n - len(table)))  # the lines since the last change keep its location
        if m.group(1) is not None:  # a .loc
            table.append(())  # a .loc line itself has none
            got = read.get(m.group(0))
            if got is None:
                key = (m.group(1), m.group(2), m.group(3))
                at_m = _PTX_INLINED_AT_RE.search(m.group(4))
                got = read[m.group(0)] = (
                    key, (files.get(key[0], key[0]), int(key[1])) if int(key[1]) else None,
                    (at_m.group(1), at_m.group(2), at_m.group(3)) if at_m else None,
                    (files.get(at_m.group(1), at_m.group(1)), int(at_m.group(2))) if at_m else ("", 0))
            key, here, at_key, at_ = got
            if here is None:
                cur = ()
            else:
                cur = (here,) + chain_at.get(at_key, (at_,)) if at_key is not None else (here,)
                chain_at[key] = cur
        else:  # a function starts: no location until its first .loc
            cur = ()
            table.append(cur)
    last = cur

    def source_at(line: int) -> _Src:
        return table[line] if line < len(table) else last

    return source_at


def _split_operands(text: str) -> tuple[str, ...]:
    """The operands of a statement: split at the commas outside brackets, braces and parentheses
    (a comma splits where the count of openers minus closers before it is 0), each stripped; an
    empty last one is no operand."""
    if "[" not in text and "{" not in text and "(" not in text and "]" not in text and "}" not in text and ")" not in text:
        parts = [p.strip() for p in text.split(",")]
        return tuple(parts if parts[-1] else parts[:-1])
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for part in text.split(","):
        cur.append(part)
        if "[" in part or "]" in part or "{" in part or "}" in part or "(" in part or ")" in part:
            depth += (part.count("[") + part.count("{") + part.count("(")
                      - part.count("]") - part.count("}") - part.count(")"))
        if depth == 0:
            out.append(",".join(cur).strip())
            cur = []
    last = ",".join(cur).strip()
    if cur and last:
        out.append(last)
    elif not cur and out and not out[-1]:
        out.pop()  # the text ended at depth 0 with an empty operand: no operand
    return tuple(out)


_Scope = tuple[int, ...]


def _leading(rest: str, stack: list[int], counter: list[int], labels: list[tuple[str, _Scope]]) -> str:
    """Consume the scope braces, blanks and labels before a statement's text: a ``{`` opens a new
    scope (numbered by ``counter``), a ``}`` closes one, a label is recorded with its scope."""
    while True:
        i = 0
        while i < len(rest) and rest[i] in " \t{}\r":
            if rest[i] == "{":
                counter[0] += 1
                stack.append(counter[0])
            elif rest[i] == "}" and stack:
                stack.pop()
            i += 1
        rest = rest[i:]
        m = _PTX_LABEL_RE.match(rest)
        if not m or rest[m.end() - 1 : m.end() + 1] == "::":
            return rest
        labels.append((m.group(1), tuple(stack)))
        rest = rest[m.end():]


def _ptx_statements(body: Sequence[str], first_line: int) -> list[tuple[int, str, tuple[tuple[str, _Scope], ...], _Scope]]:
    """Split a function body (its lines, the first at line ``first_line``) into ``(line, statement, labels, scope)``: statements end at ``;``;
    braces of inline-asm scopes and directives (``.reg``...) are dropped; labels attach to the next
    statement.  ``scope`` (and each label's) is the stack of ``{ }`` scopes it is in: a label is
    visible in its scope only (PTX ISA, Scope: labels of an inline-asm ``{ }`` block), so the
    ``DONE:`` of one inlined wait loop is not the ``DONE:`` of the next."""
    out: list[tuple[int, str, tuple[tuple[str, _Scope], ...], _Scope]] = []
    labels: list[tuple[str, _Scope]] = []
    chunks: list[tuple[int, str]] = []
    stack: list[int] = []
    counter = [0]

    def flush() -> None:
        nonlocal labels
        line = chunks[0][0] if chunks else first_line
        text = ""
        scope: _Scope = tuple(stack)
        for ln, part in chunks:
            rest = part
            if not text.strip():
                if ":" in rest or "{" in rest or "}" in rest:
                    rest = _leading(rest, stack, counter, labels)
                else:  # no scope brace and no label: only the blanks go
                    rest = rest.lstrip(" \t\r")
                scope = tuple(stack)
                if rest.strip(" \t{}"):
                    line = ln
            text += " " + rest
        stmt = text.strip(" \t{}")
        if stmt and not stmt.startswith("."):
            out.append((line, stmt, tuple(labels), scope))
            labels = []
        chunks.clear()

    for n, line_text in enumerate(body):
        if not chunks and not line_text.strip(" \t\r"):
            continue  # a blank line (a blanked .loc): nothing to keep (as in the loop below)
        if not chunks and line_text.count(";") == 1:
            # (most lines) one whole statement, no label, no scope brace: what flush() makes of it
            head, _, tail = line_text.partition(";")
            if not tail.strip(" \t\r") and ":" not in head and "{" not in head and "}" not in head:
                stmt = (" " + head.lstrip(" \t\r")).strip(" \t{}")
                if stmt and not stmt.startswith("."):
                    out.append((first_line + n, stmt, tuple(labels), tuple(stack)))
                    labels = []
                continue
        parts = line_text.split(";")
        for i, part in enumerate(parts):
            if not chunks and not part.strip(" \t\r") and i == len(parts) - 1:
                continue  # a blank start of the next statement (a blanked .loc line): nothing to keep
            chunks.append((first_line + n, part))
            if i < len(parts) - 1:
                flush()
    if chunks:
        flush()
    return out


def _find_functions(text: str) -> list[tuple[str, bool, int, list[str], int]]:
    """``(name, entry, header_line, body lines, body_first_line)`` for every function with a body."""
    lines = text.split("\n")
    line_starts = list(itertools.accumulate(map(len, lines), initial=0))
    out = []
    i = 0
    while i < len(lines):
        m = _PTX_FUNC_RE.match(lines[i]) if ".entry" in lines[i] or ".func" in lines[i] else None
        if not m:
            i += 1
            continue
        name, entry, header = m.group(2), m.group(1) == "entry", i + 1
        # find the opening brace of the body (after the parameter list)
        j = i
        depth_paren = 0
        found = None
        while j < len(lines):
            seg = lines[j] if j != i else lines[j][m.end():]
            if "(" not in seg and ")" not in seg and ";" not in seg and "{" not in seg:
                j += 1  # nothing on this line that the scan reacts to
                continue
            for k, ch in enumerate(seg):
                if ch == "(":
                    depth_paren += 1
                elif ch == ")":
                    depth_paren -= 1
                elif ch == ";" and depth_paren == 0:
                    found = ("decl", j, k)
                    break
                elif ch == "{" and depth_paren == 0:
                    found = ("body", j, k)
                    break
            if found:
                break
            j += 1
        if not found or found[0] == "decl":
            i = (found[1] if found else j) + 1
            continue
        _, bj, bk = found
        # the body: from after its "{" (at ``bk`` of line ``bj``) to the "}" that closes it, found
        # by a search for the braces (at C speed; the text of the end of the file if none closes it)
        open_at = line_starts[bj] + bj + bk  # (line_starts: the lengths of the lines before; + a newline each)
        close_at = None
        depth = 1
        for brace in _BRACE_RE.finditer(text, open_at + 1):
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                close_at = brace.start()
                break
        if close_at is None:
            body_lines = text[open_at + 1:].split("\n")
            end = len(lines) - 1
        else:
            body_lines = text[open_at + 1:close_at].split("\n")
            end = bj + text.count("\n", open_at, close_at)
        out.append((name, entry, header, body_lines, bj + 1))
        i = end + 1
    return out


_REG_RE = re.compile(r"%[A-Za-z_]\w*")

#: the registers a PTX instruction writes, from its opcode and operands (``ptx_parser._dests_of``)
DestsOf = Callable[[str, tuple[str, ...]], tuple[str, ...]]


def read_later(regs: set[str], after: Sequence[PtxInstr], dests_of: DestsOf) -> bool:
    """Whether an instruction of ``after`` (in listing order) reads one of ``regs`` before that register
    is written again: an operand (not its destination) or its guard.  A read only on a path back through
    a loop is not seen."""
    regs = set(regs)
    for i in after:
        if not regs:
            return False
        dests = dests_of(i.opcode, i.operands)
        reads = i.operands[1:] if dests else i.operands
        if any(r in regs for o in (i.predicate, *reads) for r in _REG_RE.findall(o)):
            return True
        regs.difference_update(dests)
    return False


def loop_is_intended(instrs: Sequence[PtxInstr], body: Collection[int], succs: Sequence[Sequence[int]],
                     lines: Sequence[str], dests_of: DestsOf) -> bool:
    """Whether a loop (``body``: the indices of its instructions, :func:`fuzzgpu.sass.loops.natural_loop`
    on the graph ``succs``) with no memory operation or synchronisation is a delay its source asked for:
    it has inline asm (NVVM marks an ``asm volatile``, even an empty one, ``// begin inline asm``:
    ``lines`` is the PTX text's; the lines from the statement before each of its instructions, so a
    label's and an empty asm's too), or a value it computes is read after it: a register it writes
    reaches a read on a path out of the loop (:func:`fuzzgpu.sass.loops.written_and_read_after`; a read
    before it, a guard on the initial value, is not of the loop's result).  A loop whose registers
    nothing after it reads (LLVM's counted loop left empty by unswitching: FlashInfer's
    ``permuteKernel``) is not a delay: deleting it is not observable."""
    for i in sorted(body):
        start = instrs[i - 1].line if i else 0
        if any("begin inline asm" in ln for ln in lines[start:instrs[i].line]):
            return True

    def writes(i: int) -> tuple[str, ...]:
        return dests_of(instrs[i].opcode, instrs[i].operands)

    def reads(i: int) -> list[str]:
        ins = instrs[i]
        operands = ins.operands[1:] if writes(i) else ins.operands
        return [r for o in (ins.predicate, *operands) for r in _REG_RE.findall(o)]

    regs = {d for i in body for d in writes(i)}
    return written_and_read_after(body, succs, regs, reads, writes)
