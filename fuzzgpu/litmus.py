"""The PTX litmus dialect of Dat3M/herd: parser and printer.

:func:`parse` turns ``.litmus`` text into a :class:`fuzzgpu.ir.Program`; :func:`format_program` writes a
Program back in the same dialect, with aligned columns.  ``parse(format_program(p)) == p`` for every
Program that :func:`fuzzgpu.ir.validate` accepts and the printer can express (see
``docs/litmus-format.md`` for the few it cannot).

The parser is a hand-written tokenizer plus a recursive-descent parser.  It is strict: anything it does
not understand raises :class:`fuzzgpu.errors.SourceError` pointing at the offending token, never another
exception.  Its work is linear in the input (condition nesting is bounded).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from .errors import SourceError
from .ir import (
    AsyncRead,
    BulkCommit,
    BulkWait,
    CpAsync,
    CpAsyncBulk,
    CpAsyncCommit,
    CpAsyncMbarrierArrive,
    CpAsyncWait,
    ClusterBarrier,
    FenceMbarrierInit,
    GridDepControl,
    MbarrierArrive,
    MbarrierExpectTx,
    MbarrierInit,
    MbarrierWait,
    Tcgen05Fence,
    FENCE_SEMS,
    FILLER_KINDS,
    LOAD_SEMS,
    MAX_COMMENTS,
    MAX_CONDITION_TERMS,
    MAX_INIT_REGISTERS,
    MAX_INSTRUCTIONS,
    MAX_LOCATIONS,
    MAX_THREADS,
    MAX_VALUE,
    NAME_RE,
    REGISTER_RE,
    RMW_SEMS,
    STORE_SEMS,
    And,
    Arith,
    ArithOp,
    Atom,
    Barrier,
    BoolConst,
    Branch,
    Cmp,
    Cond,
    Condition,
    Expr,
    Fence,
    Filler,
    Goto,
    Instruction,
    Label,
    Load,
    Location,
    LocRef,
    Mov,
    Not,
    Operand,
    Or,
    Placement,
    Program,
    ProgramError,
    Proxy,
    ProxyFence,
    ProxyFenceKind,
    Red,
    instruction_from_json,
    instruction_to_json,
    RegRef,
    RmwOp,
    Scope,
    Sem,
    Space,
    Store,
    Term,
    Thread,
    validate,
)

__all__ = ["parse", "parse_file", "parse_path_tree", "format_program", "format_instruction"]

MAX_NESTING = 100  # condition parentheses / negations
MAX_PRINTED_DEPTH = 40  # expression trees up to this depth print within MAX_NESTING
MAX_DIGITS = 20

# --------------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------------

WORD, NUM, STR, PUNCT, EOF = "word", "number", "string", "punct", "end"
_TWO_CHAR_PUNCT = frozenset({"/\\", "\\/", "==", "!=", "<=", ">="})
_ONE_CHAR_PUNCT = frozenset("{}()[];|,@:=<>~")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_DIGITS = frozenset("0123456789")
_WORD_CHARS = _WORD_START | _DIGITS
_SPACE = frozenset(" \t\r\n\f\v")
# runs of characters, matched by the regex engine (a Python loop over a 10 MB word takes seconds)
_SPACE_RUN = re.compile(r"[ \t\r\n\f\v]*")
_WORD_RUN = re.compile(r"[A-Za-z0-9_]*")
_DIGIT_RUN = re.compile(r"[0-9]*")
#: the largest .litmus file read, and the most tokens parsed (docs/reliability.md, "Limits"): the
#: largest program within the IR's limits (64 threads x 256 instructions, a condition of 65,536
#: comparisons) has about 400,000 tokens; a file with more is refused when the parser reaches them
MAX_LITMUS_BYTES = 16 << 20
MAX_TOKENS = 1 << 19
_NOT_SPACE_RUN = re.compile(r"[^ \t\r\n\f\v]*")
_BLANK_RUN = re.compile(r"[ \t]*")


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    line: int
    col: int

    def describe(self) -> str:
        if self.kind == EOF:
            return "end of input"
        if self.kind == STR:
            return "a comment string"
        return repr(self.text) if len(self.text) <= 60 else repr(self.text[:57]) + "..."


class _Tokenizer:
    """Splits the text after the ``PTX NAME`` header into tokens.

    Words may carry dotted qualifiers (``ld.acquire.gpu``, ``fence.proxy.async.shared::cta``);
    numbers are decimal, optionally negative; strings are ``"..."`` and may span lines.
    """

    def __init__(self, text: str, path: str, pos: int, line: int, line_start: int) -> None:
        self.text = text
        self.path = path
        self.pos = pos
        self.line = line
        self.line_start = line_start

    def error(self, message: str, pos: int) -> SourceError:
        return SourceError(message, self.path, self.line, pos - self.line_start + 1)

    def tokens(self) -> Iterator[Token]:
        """The tokens, made one at a time as the parser asks (an error stops the work there)."""
        text, n = self.text, len(self.text)
        while True:
            self._skip_space()
            if self.pos >= n:
                eof = Token(EOF, "", self.line, self.pos - self.line_start + 1)
                while True:
                    yield eof
            c = text[self.pos]
            if c in _WORD_START:
                yield self._word()
            elif c in _DIGITS or (c == "-" and self.pos + 1 < n and text[self.pos + 1] in _DIGITS):
                yield self._number()
            elif c == '"':
                yield self._string()
            else:
                yield self._punct()

    def _skip_space(self) -> None:
        end = _SPACE_RUN.match(self.text, self.pos).end()  # type: ignore[union-attr]
        newlines = self.text.count("\n", self.pos, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rindex("\n", self.pos, end) + 1
        self.pos = end

    def _token(self, kind: str, start: int) -> Token:
        return Token(kind, self.text[start : self.pos], self.line, start - self.line_start + 1)

    def _run(self, chars: frozenset[str]) -> None:
        run = _WORD_RUN if chars is _WORD_CHARS else _DIGIT_RUN
        self.pos = run.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def _word(self) -> Token:
        start = self.pos
        text, n = self.text, len(self.text)
        self._run(_WORD_CHARS)
        dotted = False
        while self.pos + 1 < n:
            if text[self.pos] == "." and text[self.pos + 1] in _WORD_CHARS:
                self.pos += 1
                self._run(_WORD_CHARS)
                dotted = True
            elif dotted and text.startswith("::", self.pos) and self.pos + 2 < n and text[self.pos + 2] in _WORD_START:
                self.pos += 2
                self._run(_WORD_CHARS)
            else:
                break
        return self._token(WORD, start)

    def _number(self) -> Token:
        start = self.pos
        if self.text[self.pos] == "-":
            self.pos += 1
        self._run(_DIGITS)
        if self.pos < len(self.text) and self.text[self.pos] in _WORD_START:
            raise self.error("malformed number", start)
        if self.pos - start > MAX_DIGITS:
            raise self.error("number too long", start)
        return self._token(NUM, start)

    def _string(self) -> Token:
        start = self.pos
        end = self.text.find('"', start + 1)
        if end < 0:
            raise self.error("unterminated comment string", start)
        tok = Token(STR, self.text[start + 1 : end], self.line, start - self.line_start + 1)
        newlines = self.text.count("\n", start, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rindex("\n", start, end) + 1
        self.pos = end + 1
        return tok

    def _punct(self) -> Token:
        start = self.pos
        two = self.text[start : start + 2]
        if two in _TWO_CHAR_PUNCT:
            self.pos += 2
        elif self.text[start] in _ONE_CHAR_PUNCT:
            self.pos += 1
        else:
            raise self.error(f"unexpected character {self.text[start]!r}", start)
        return self._token(PUNCT, start)


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------

_LOAD_BASES = {"ld": Proxy.GENERIC, "suld": Proxy.SURFACE, "tld": Proxy.TEXTURE, "cold": Proxy.CONSTANT}
_STORE_BASES = {"st": Proxy.GENERIC, "sust": Proxy.SURFACE, "tst": Proxy.TEXTURE, "cost": Proxy.CONSTANT}
_ATOM_BASES = {"atom": Proxy.GENERIC, "suatom": Proxy.SURFACE, "tatom": Proxy.TEXTURE, "coatom": Proxy.CONSTANT}
_RED_BASES = {"red": Proxy.GENERIC, "sured": Proxy.SURFACE, "tred": Proxy.TEXTURE, "cored": Proxy.CONSTANT}
_PROXY_PREFIX = {Proxy.GENERIC: "", Proxy.SURFACE: "su", Proxy.TEXTURE: "t", Proxy.CONSTANT: "co"}
_BRANCHES = {"b" + c.value: c for c in Cond}
_ARITH = {op.value: op for op in ArithOp}
_MEMBAR = {"cta": Scope.CTA, "gl": Scope.GPU, "sys": Scope.SYS}
_MNEMONICS = frozenset(
    {*_LOAD_BASES, *_STORE_BASES, *_ATOM_BASES, *_RED_BASES, *_BRANCHES, *_ARITH}
    | {"fence", "membar", "bar", "barrier", "mov", "goto", "filler"}
    | {"griddepcontrol", "mbarrier", "cp", "async", "tcgen05"}
)
_GRIDDEP_ACTIONS = ("launch_dependents", "wait")
_MBAR_ARRIVE_SEMS = {"release": Sem.RELEASE, "relaxed": Sem.RELAXED}
_MBAR_WAIT_SEMS = {"acquire": Sem.ACQUIRE, "relaxed": Sem.RELAXED}
_MBAR_SCOPES = {"cta": Scope.CTA, "cluster": Scope.CLUSTER}
_BULK_COMPLETIONS = ("mbarrier", "bulk_group")
#: PTX spellings of the completion mechanism in the state-space form of cp{.reduce}.async.bulk
_BULK_COMPLETION_SPELLINGS = {"mbarrier": "mbarrier", "mbarrier::complete_tx::bytes": "mbarrier", "bulk_group": "bulk_group"}
#: state-space qualifiers of copies (``.shared::cta``/``.shared::cluster`` are both a shared location here)
_COPY_SPACES = {"global": Space.GLOBAL, "shared": Space.SHARED, "shared::cta": Space.SHARED, "shared::cluster": Space.SHARED}
_TCGEN05_FENCES = ("before_thread_sync", "after_thread_sync")
_LOC_KINDS = ("mbarrier",)  # "data" is the default and is not written
_PROXY_FENCE_SPACES = ("global", "shared::cta", "shared::cluster")
_PLACEMENT_KEYS = ("cta", "gpu", "grid", "cluster", "warp")
#: the state-space qualifier of a distributed-shared-memory access (``ld``/``st``/``atom``/``red``/
#: ``mbarrier.arrive``): parser and printer read this one table
_DSM_SPACE = "shared::cluster"
_DSM_QUALIFIER: dict[str, dict[str, object]] = {"dsm": {_DSM_SPACE: True}}
#: ``barrier.cluster`` modes and their semantics qualifiers (the first is the default)
_CLUSTER_BARRIER_SEMS = {"arrive": {"release": Sem.RELEASE, "relaxed": Sem.RELAXED}, "wait": {"acquire": Sem.ACQUIRE}}
_SEMS = {s.value: s for s in Sem}
_SCOPES = {s.value: s for s in Scope}
_RMW_OPS = {o.value: o for o in RmwOp}
_LOC_PROXIES = {p.value: p for p in Proxy}
_LOC_SPACES = {s.value: s for s in Space}
_QUANTIFIERS = ("exists", "forall", "final")
_CMP_PUNCT = {"==": "==", "=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_JSON_WORDS: dict[str, object] = {"true": True, "false": False, "null": None}
_VALIDATE_WHERE = re.compile(r"^(\w+), instruction (\d+) ")


@dataclass
class _Qualifier:
    text: str
    col: int


@dataclass
class _Cell:
    """One parsed instruction with the tokens errors may point at."""

    instr: Instruction
    token: Token
    targets: list[Token] = field(default_factory=list)  # label operands
    locations: list[Token] = field(default_factory=list)  # location operands
    #: (operand token, state space its mnemonic says it is in): ``cp.async.bulk.shared.global ...``
    spaces: list[tuple[Token, Space]] = field(default_factory=list)


@dataclass
class _ThreadHeader:
    name: str
    token: Token
    placement: Placement


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.name, self.arch, start, line, line_start = self._header()
        self._stream = _Tokenizer(text, path, start, line, line_start).tokens()
        self._ahead: list[Token] = []  # tokens read from the stream, not yet consumed
        self._behind: list[Token] = []  # the last two consumed
        self._count = 0  # tokens read
        self._comparisons = 0  # in the condition
        self.first = self._fill(0)
        self.comments: list[str] = []
        self.locations: dict[str, Location] = {}
        self.location_tokens: dict[str, Token] = {}
        self.register_inits: list[tuple[Token, Token, int]] = []  # (thread token, register token, value)
        self.headers: list[_ThreadHeader] = []
        self.thread_names: set[str] = set()
        self.cells: list[list[_Cell]] = []
        self.observed: list[str] = []
        self.condition: Condition | None = None
        self.condition_token: Token | None = None
        self.alias_targets: list[Token] = []
        self.location_uses: list[Token] = []  # location operands in text order (row by row)
        self.pdl_grids: list[int] = []

    # -- token helpers ---------------------------------------------------------------------

    def error(self, message: str, tok: Token) -> SourceError:
        return SourceError(message, self.path, tok.line, tok.col)

    def _fill(self, k: int) -> Token:
        while len(self._ahead) <= k:
            tok = next(self._stream)
            self._count += 1
            if self._count > MAX_TOKENS and tok.kind != EOF:
                raise self.error(f"more than {MAX_TOKENS} tokens (the limit of a litmus test)", tok)
            self._ahead.append(tok)
        return self._ahead[k]

    def peek(self, k: int = 0) -> Token:
        """The token ``k`` ahead (``k`` < 0: already consumed, at most two back)."""
        if k < 0:
            return self._behind[k] if -k <= len(self._behind) else self.first
        return self._fill(k)

    def next(self) -> Token:
        tok = self._fill(0)
        if tok.kind != EOF:
            self._ahead.pop(0)
            self._behind = [*self._behind[-1:], tok]
        return tok

    def at(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind == PUNCT and tok.text == text

    def at_word(self, text: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind == WORD and tok.text == text

    def expect(self, text: str, what: str = "") -> Token:
        tok = self.next()
        if tok.kind != PUNCT or tok.text != text:
            raise self.error(f"expected {text!r}{what}, found {tok.describe()}", tok)
        return tok

    def expect_name(self, what: str) -> Token:
        tok = self.next()
        if tok.kind != WORD or not NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected {what}, found {tok.describe()}", tok)
        return tok

    def expect_int(self, what: str, minimum: int | None = None) -> int:
        tok = self.next()
        if tok.kind != NUM:
            raise self.error(f"expected {what}, found {tok.describe()}", tok)
        value = self.int_value(tok)
        if minimum is not None and value < minimum:
            raise self.error(f"{what} must be at least {minimum}, got {value}", tok)
        return value

    def int_value(self, tok: Token) -> int:
        value = int(tok.text)
        if not -MAX_VALUE < value < MAX_VALUE:
            raise self.error(f"value {value} does not fit in 32 bits", tok)
        return value

    # -- header, comments, init block ------------------------------------------------------

    def _header(self) -> tuple[str, str, int, int, int]:
        """``PTX NAME`` on the first non-blank line; the name is everything up to whitespace."""
        text = self.text
        pos, line, line_start = 0, 1, 0
        pos = _SPACE_RUN.match(text).end()  # type: ignore[union-attr]
        if "\n" in text[:pos]:
            line, line_start = 1 + text.count("\n", 0, pos), text.rindex("\n", 0, pos) + 1
        word_end = _NOT_SPACE_RUN.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos:word_end] not in ("PTX", "ptx"):
            found = text[pos : min(word_end, pos + 40)] or "end of input"
            raise SourceError(f"expected 'PTX TESTNAME' header, found {found!r}" + ("..." if word_end > pos + 40 else ""),
                              self.path, line, pos - line_start + 1)
        name_start = word_end
        name_start = _BLANK_RUN.match(text, name_start).end()  # type: ignore[union-attr]
        name_end = _NOT_SPACE_RUN.match(text, name_start).end()  # type: ignore[union-attr]
        if name_end == name_start:
            raise SourceError("missing test name after 'PTX'", self.path, line, name_start - line_start + 1)
        return text[name_start:name_end], "PTX", name_end, line, line_start

    def parse(self) -> Program:
        while self.peek().kind == STR:
            if len(self.comments) == MAX_COMMENTS:
                raise self.error(f"more than {MAX_COMMENTS} comment strings (the limit of a litmus test)", self.peek())
            self.comments.append(self.next().text)
        self.parse_init_block()
        self.parse_thread_headers()
        self.parse_rows()
        self.declare_implicit_locations()
        self.check_labels()
        self.check_operand_spaces()
        if self.at_word("locations"):
            self.parse_observed()
        if self.peek().kind != EOF:
            self.parse_condition()
        tok = self.peek()
        if tok.kind != EOF:
            raise self.error(f"unexpected {tok.describe()} after the condition", tok)
        return self.build()

    def parse_init_block(self) -> None:
        self.expect("{", " to open the init block")
        while not self.at("}"):
            self.parse_declaration()
            if self.at(";"):
                self.next()
            elif not self.at("}"):
                tok = self.peek()
                raise self.error(f"expected ';' or '}}' after a declaration, found {tok.describe()}", tok)
        self.next()
        if self.at(";"):
            self.next()

    def parse_declaration(self) -> None:
        first = self.peek()
        if first.kind == WORD and first.text == "grid" and self.peek(1).kind == NUM:
            self.parse_grid_declaration()
            return
        if first.kind == NUM or (first.kind == WORD and self.at(":", 1)):
            thread = self.parse_thread_ref()
            self.expect(":")
            reg = self.next()
            if reg.kind != WORD or not REGISTER_RE.fullmatch(reg.text):
                raise self.error(f"expected a register (r0, r1...), found {reg.describe()}", reg)
            self.expect("=", " after the register")
            if len(self.register_inits) == MAX_THREADS * MAX_INIT_REGISTERS:
                raise self.error(f"more than {MAX_THREADS * MAX_INIT_REGISTERS} initialised registers (the limit of a litmus test)", reg)
            self.register_inits.append((thread, reg, self.expect_int("an initial value")))
            return
        name = self.expect_name("a location declaration")
        self.check_location_name(name)
        if name.text in self.locations:
            raise self.error(f"location {name.text!r} declared twice", name)
        loc = Location(name.text)
        if self.at("@"):
            loc = self.parse_location_attributes(loc)
            if self.at("="):
                self.next()
                loc = _replace(loc, init=self.expect_int("an initial value"))
            elif loc.alias_of is None:
                tok = self.peek()
                raise self.error(f"expected '=' or 'aliases' in the declaration of {name.text!r}, found {tok.describe()}", tok)
        else:
            self.expect("=", f" after location {name.text!r}")
            loc = _replace(loc, init=self.expect_int("an initial value"))
        self.add_location(name, loc)

    def add_location(self, tok: Token, loc: Location) -> None:
        if len(self.locations) == MAX_LOCATIONS:
            raise self.error(f"more than {MAX_LOCATIONS} locations (the limit of a litmus test)", tok)
        self.locations[tok.text] = loc
        self.location_tokens[tok.text] = tok

    def parse_grid_declaration(self) -> None:
        """``grid N @ pdl``: grid N is launched as a programmatic dependent of grid N-1."""
        self.next()
        number = self.peek()
        grid = self.expect_int("a grid number", minimum=1)
        if len(self.pdl_grids) == MAX_THREADS:
            raise self.error(f"more than {MAX_THREADS} PDL grids (the limit of a litmus test)", number)
        if grid in self.pdl_grids:
            raise self.error(f"grid {grid} declared twice", number)
        self.expect("@", f" after 'grid {grid}'")
        attr = self.next()
        if attr.kind != WORD or attr.text != "pdl":
            raise self.error(f"expected 'pdl' (the only grid attribute), found {attr.describe()}", attr)
        self.pdl_grids.append(grid)

    def parse_location_attributes(self, loc: Location) -> Location:
        """``@ [proxy] [space] [mbarrier] [aliases OTHER]`` -- at least one of them, each at most once."""
        self.expect("@")
        seen: set[str] = set()
        while self.peek().kind == WORD and self.peek().text != "aliases":
            tok = self.next()
            if tok.text in _LOC_PROXIES and "proxy" not in seen:
                seen.add("proxy")
                loc = _replace(loc, proxy=_LOC_PROXIES[tok.text])
            elif tok.text in _LOC_SPACES and "space" not in seen:
                seen.add("space")
                loc = _replace(loc, space=_LOC_SPACES[tok.text])
            elif tok.text in _LOC_KINDS and "kind" not in seen:
                seen.add("kind")
                loc = _replace(loc, kind=tok.text)
            elif tok.text == "cta" and "cta" not in seen:
                seen.add("cta")
                loc = _replace(loc, cta=self.expect_int("the CTA of the shared location", minimum=0))
            else:
                raise self.error(
                    f"bad location attribute {tok.text!r} (a proxy, global or shared, mbarrier, cta N; once each)", tok
                )
        if self.at_word("aliases"):
            self.next()
            target = self.expect_name("the aliased location")
            if target.text == loc.name:
                raise self.error(f"location {loc.name!r} aliases itself", target)
            self.alias_targets.append(target)
            seen.add("aliases")
            loc = _replace(loc, alias_of=target.text)
        if not seen:
            raise self.error("expected a proxy, a state space or 'aliases' after '@'", self.peek())
        return loc

    def check_location_name(self, tok: Token) -> None:
        if REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a location, found register {tok.text!r}", tok)

    def parse_thread_ref(self) -> Token:
        """``P1`` or ``1`` (the thread number form, meaning ``P1``)."""
        tok = self.next()
        if tok.kind == NUM:
            if tok.text.startswith("-"):
                raise self.error(f"bad thread number {tok.text}", tok)
            return Token(WORD, f"P{int(tok.text)}", tok.line, tok.col)
        if tok.kind != WORD or not NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a thread name, found {tok.describe()}", tok)
        return tok

    # -- threads and instruction rows ------------------------------------------------------

    def parse_thread_headers(self) -> None:
        while True:
            if len(self.headers) == MAX_THREADS:
                raise self.error(f"more than {MAX_THREADS} threads (the limit of a litmus test)", self.peek())
            self.headers.append(self.parse_thread_header())
            tok = self.next()
            if tok.kind == PUNCT and tok.text == ";":
                break
            if not (tok.kind == PUNCT and tok.text == "|"):
                raise self.error(f"expected '|' or ';' in the thread header row, found {tok.describe()}", tok)
        self.cells = [[] for _ in self.headers]

    def parse_thread_header(self) -> _ThreadHeader:
        tok = self.next()
        if tok.kind != WORD or not NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a thread header such as 'P0@cta 0,gpu 0', found {tok.describe()}", tok)
        if tok.text in self.thread_names:
            raise self.error(f"thread {tok.text!r} declared twice", tok)
        self.thread_names.add(tok.text)
        placement = Placement()
        if self.at("@"):
            self.next()
            placement = self.parse_placement()
        return _ThreadHeader(tok.text, tok, placement)

    def parse_placement(self) -> Placement:
        values: dict[str, int] = {}
        while True:
            key = self.next()
            if key.kind != WORD or key.text not in _PLACEMENT_KEYS:
                raise self.error(
                    f"bad placement: expected one of {', '.join(_PLACEMENT_KEYS)}, found {key.describe()}", key
                )
            if key.text in values:
                raise self.error(f"bad placement: {key.text!r} given twice", key)
            values[key.text] = self.expect_int(f"the {key.text} number", minimum=0)
            if not self.at(","):
                return Placement(**values)
            self.next()

    def at_rows_end(self) -> bool:
        tok = self.peek()
        if tok.kind == EOF:
            return True
        if tok.kind == PUNCT:
            return tok.text == "~"
        return tok.kind == WORD and tok.text in (*_QUANTIFIERS, "locations") and not self.at(":", 1)

    def parse_rows(self) -> None:
        width = len(self.headers)
        rows = 0
        while not self.at_rows_end():
            rows += 1
            if rows > MAX_THREADS * MAX_INSTRUCTIONS:
                raise self.error(f"more than {MAX_THREADS * MAX_INSTRUCTIONS} rows (the limit of a litmus test)", self.peek())
            column = 0
            while True:
                cell = self.parse_cell()
                if cell is not None:
                    if len(self.cells[column]) == MAX_INSTRUCTIONS:
                        raise self.error(f"thread {self.headers[column].name} has more than {MAX_INSTRUCTIONS} instructions "
                                         "(the limit of a litmus test)", cell.token)
                    self.cells[column].append(cell)
                    self.location_uses.extend(cell.locations)
                sep = self.next()
                if sep.kind == PUNCT and sep.text == ";":
                    break
                if sep.kind == PUNCT and sep.text == "|":
                    column += 1
                    if column >= width:
                        raise self.error(f"too many columns: the test has {width} thread(s)", sep)
                    continue
                if sep.kind == EOF:
                    raise self.error("unexpected end of input: missing ';' at the end of the row", sep)
                hint = " (missing ';' at the end of the row?)" if sep.line > self.peek(-2).line else ""
                raise self.error(f"expected '|' or ';' after an instruction, found {sep.describe()}{hint}", sep)
            if column + 1 != width:
                raise self.error(f"row has {column + 1} column(s), expected {width}", sep)

    def parse_cell(self) -> _Cell | None:
        tok = self.peek()
        if tok.kind == PUNCT and tok.text in ("|", ";"):
            return None
        if tok.kind == PUNCT and tok.text == "{":
            return self.parse_json_instruction()
        if tok.kind != WORD:
            raise self.error(f"expected an instruction, found {tok.describe()}", tok)
        self.next()
        if self.at(":"):
            self.next()
            if not NAME_RE.fullmatch(tok.text):
                raise self.error(f"bad label name {tok.text!r}", tok)
            return _Cell(Label(tok.text), tok)
        if tok.text.split(".", 1)[0] not in _MNEMONICS:
            raise self.error(f"unknown instruction {tok.text!r}", tok)
        operands = self.parse_operands()
        return _InstructionBuilder(self, tok, operands).build()

    def parse_json_instruction(self) -> _Cell:
        """The generic form of an instruction the dialect has no mnemonic for (an extension registered
        with :func:`fuzzgpu.ir.register_instruction`): its JSON object, ``{"op": "tag", ...}``."""
        start = self.peek()
        obj = self.parse_json_value(0)
        if not isinstance(obj, dict):
            raise self.error("expected a JSON object", start)
        try:
            instr = instruction_from_json(obj)
        except (ProgramError, TypeError) as e:
            raise self.error(str(e), start) from None
        cell = _Cell(instr, start)
        for loc in instr.locations():
            if isinstance(loc, str) and NAME_RE.fullmatch(loc) and not REGISTER_RE.fullmatch(loc):
                cell.locations.append(Token(WORD, loc, start.line, start.col))
        target = getattr(instr, "target", None)
        if isinstance(target, str):
            cell.targets.append(Token(WORD, target, start.line, start.col))
        return cell

    def parse_json_value(self, depth: int) -> object:
        tok = self.next()
        if depth > MAX_NESTING:
            raise self.error(f"JSON nested more than {MAX_NESTING} deep", tok)
        if tok.kind == NUM:
            return int(tok.text)
        if tok.kind == STR:
            return tok.text
        if tok.kind == WORD and tok.text in _JSON_WORDS:
            return _JSON_WORDS[tok.text]
        if tok.kind == PUNCT and tok.text == "[":
            items: list[object] = []
            while not self.at("]"):
                items.append(self.parse_json_value(depth + 1))
                if not self.at("]"):
                    self.expect(",", " or ']' in a JSON list")
            self.next()
            return items
        if tok.kind == PUNCT and tok.text == "{":
            obj: dict[str, object] = {}
            while not self.at("}"):
                key = self.next()
                if key.kind != STR or key.text in obj:
                    raise self.error(f"expected a new JSON key string, found {key.describe()}", key)
                self.expect(":", " after a JSON key")
                obj[key.text] = self.parse_json_value(depth + 1)
                if not self.at("}"):
                    self.expect(",", " or '}' in a JSON object")
            self.next()
            return obj
        raise self.error(f"expected a JSON value, found {tok.describe()}", tok)

    def parse_operands(self) -> list[Token]:
        operands: list[Token] = []
        if self.at("|") or self.at(";"):
            return operands
        while True:
            tok = self.next()
            if tok.kind not in (WORD, NUM):
                raise self.error(f"expected an operand, found {tok.describe()}", tok)
            operands.append(tok)
            if not self.at(","):
                return operands
            self.next()

    def declare_implicit_locations(self) -> None:
        for target in self.alias_targets:
            if target.text not in self.locations:
                raise self.error(f"location {target.text!r} is aliased but not declared", target)
        for tok in self.location_uses:
            if tok.text not in self.locations:
                self.add_location(tok, Location(tok.text))

    def check_operand_spaces(self) -> None:
        """State spaces written in a mnemonic (``cp.async.bulk.shared.global``) must be those declared."""
        for column in self.cells:
            for cell in column:
                for tok, space in cell.spaces:
                    loc = self.locations[tok.text]
                    if loc.space is not space:
                        raise self.error(
                            f"{tok.text!r} is a {loc.space} location, but {cell.token.text!r} names a {space} operand here "
                            f"(declare it: {tok.text} @ {space} = 0;)",
                            tok,
                        )

    def check_labels(self) -> None:
        for column in self.cells:
            defined: set[str] = set()
            for cell in column:
                if isinstance(cell.instr, Label):
                    if cell.instr.name in defined:
                        raise self.error(f"label {cell.instr.name!r} defined twice in this thread", cell.token)
                    defined.add(cell.instr.name)
            for cell in column:
                for target in cell.targets:
                    if target.text not in defined:
                        raise self.error(f"unknown label {target.text!r}", target)

    # -- locations clause and condition ----------------------------------------------------

    def parse_observed(self) -> None:
        self.next()
        self.expect("[", " after 'locations'")
        while not self.at("]"):
            self.observed.append(str(self.parse_term(allow_int=False)))
            if self.at(";"):
                self.next()
            elif not self.at("]"):
                tok = self.peek()
                raise self.error(f"expected ';' or ']' in the locations clause, found {tok.describe()}", tok)
        self.next()

    def parse_condition(self) -> None:
        tok = self.next()
        self.condition_token = tok
        if tok.kind == PUNCT and tok.text == "~":
            word = self.next()
            if word.kind != WORD or word.text != "exists":
                raise self.error(f"expected 'exists' after '~', found {word.describe()}", word)
            quantifier = "~exists"
        elif tok.kind == WORD and tok.text in _QUANTIFIERS:
            quantifier = tok.text
        else:
            raise self.error(
                f"expected the condition (exists, ~exists, forall or final), found {tok.describe()}", tok
            )
        self.condition = Condition(quantifier, self.parse_disjunction(0))

    def parse_disjunction(self, depth: int) -> Expr:
        args = [self.parse_conjunction(depth)]
        while self.at("\\/"):
            self.next()
            args.append(self.parse_conjunction(depth))
        return args[0] if len(args) == 1 else Or(tuple(args))

    def parse_conjunction(self, depth: int) -> Expr:
        args = [self.parse_unary(depth)]
        while self.at("/\\"):
            self.next()
            args.append(self.parse_unary(depth))
        return args[0] if len(args) == 1 else And(tuple(args))

    def parse_unary(self, depth: int) -> Expr:
        tok = self.peek()
        if depth > MAX_NESTING:
            raise self.error(f"condition nested more than {MAX_NESTING} deep", tok)
        if self.at("~") or (self.at_word("not") and self.is_keyword_here()):
            self.next()
            return Not(self.parse_unary(depth + 1))
        if self.at("("):
            self.next()
            expr = self.parse_group(depth + 1)
            self.expect(")", " to close '('")
            return expr
        if tok.kind == WORD and tok.text in ("true", "false") and self.is_keyword_here():
            self.next()
            return BoolConst(tok.text == "true")
        self._comparisons += 1
        if self._comparisons > MAX_CONDITION_TERMS:
            raise self.error(f"more than {MAX_CONDITION_TERMS} comparisons in the condition (the limit of a litmus test)", tok)
        lhs = self.parse_term()
        op = self.next()
        if op.kind != PUNCT or op.text not in _CMP_PUNCT:
            raise self.error(f"expected a comparison (==, !=, <, <=, >, >=), found {op.describe()}", op)
        return Cmp(_CMP_PUNCT[op.text], lhs, self.parse_term())

    def parse_group(self, depth: int) -> Expr:
        """Inside parentheses.  A leading ``/\\`` or ``\\/`` makes an explicit n-ary group, which may
        have zero or one member: ``(/\\)`` is ``And(())``, ``(\\/ a)`` is ``Or((a,))``."""
        for op, cls in (("/\\", And), ("\\/", Or)):
            if self.at(op):
                self.next()
                args: list[Expr] = []
                if not self.at(")"):
                    args.append(self.parse_unary(depth))
                    while self.at(op):
                        self.next()
                        args.append(self.parse_unary(depth))
                return cls(tuple(args))
        return self.parse_disjunction(depth)

    def is_keyword_here(self) -> bool:
        """``not``/``true``/``false`` are keywords unless used as a location (``not == 1``) or thread
        (``true:r0``) name."""
        tok = self.peek(1)
        return not (tok.kind == PUNCT and (tok.text in _CMP_PUNCT or tok.text == ":"))

    def parse_term(self, allow_int: bool = True) -> Term:
        tok = self.peek()
        if tok.kind == NUM and not self.at(":", 1):
            if not allow_int:
                raise self.error(f"expected a location or register, found {tok.describe()}", tok)
            self.next()
            return self.int_value(tok)
        if tok.kind == NUM or (tok.kind == WORD and self.at(":", 1)):
            thread = self.parse_thread_ref()
            self.expect(":")
            reg = self.next()
            if reg.kind != WORD or not REGISTER_RE.fullmatch(reg.text):
                raise self.error(f"expected a register (r0, r1...), found {reg.describe()}", reg)
            if thread.text not in self.thread_names:
                raise self.error(f"unknown thread {thread.text!r}", thread)
            return RegRef(thread.text, reg.text)
        if tok.kind == WORD and NAME_RE.fullmatch(tok.text):
            self.next()
            if REGISTER_RE.fullmatch(tok.text):
                raise self.error(f"register {tok.text!r} needs a thread, as in P0:{tok.text}", tok)
            if tok.text not in self.locations:
                raise self.error(f"undeclared location {tok.text!r}", tok)
            return LocRef(tok.text)
        raise self.error(f"expected a register, location or number, found {tok.describe()}", tok)

    # -- building the Program --------------------------------------------------------------

    def build(self) -> Program:
        inits: list[dict[str, int]] = [{} for _ in self.headers]
        names = [h.name for h in self.headers]
        for thread, reg, value in self.register_inits:
            if thread.text not in names:
                raise self.error(f"register initialised for unknown thread {thread.text!r}", thread)
            init = inits[names.index(thread.text)]
            if reg.text in init:
                raise self.error(f"register {thread.text}:{reg.text} initialised twice", reg)
            init[reg.text] = value
        threads = tuple(
            Thread(h.name, h.placement, tuple(c.instr for c in cells), tuple(sorted(init.items())))
            for h, cells, init in zip(self.headers, self.cells, inits)
        )
        program = Program(
            name=self.name,
            threads=threads,
            locations=tuple(self.locations.values()),
            condition=self.condition,
            comments=tuple(self.comments),
            observed=tuple(self.observed),
            arch=self.arch,
            pdl_grids=tuple(self.pdl_grids),
        )
        try:
            return validate(program)
        except ProgramError as e:
            raise self.error(str(e), self.token_for(str(e))) from None

    def token_for(self, message: str) -> Token:
        """The best token to blame for a :class:`ProgramError` message from ``validate``."""
        m = _VALIDATE_WHERE.match(message)
        for header, cells in zip(self.headers, self.cells):
            if m and m.group(1) == header.name:
                n = int(m.group(2))
                return cells[n].token if n < len(cells) else header.token
            if message.startswith(f"{header.name}:"):
                return header.token
        if message.startswith("condition") and self.condition_token is not None:
            return self.condition_token
        for name, tok in self.location_tokens.items():
            if repr(name) in message:
                return tok
        return self.headers[0].token if self.headers else self.first


def _replace(loc: Location, **changes: object) -> Location:
    return dataclasses.replace(loc, **changes)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------------


class _InstructionBuilder:
    """Builds one instruction from its mnemonic token and operand tokens."""

    def __init__(self, parser: _Parser, mnemonic: Token, operands: list[Token]) -> None:
        self.p = parser
        self.tok = mnemonic
        parts = mnemonic.text.split(".")
        self.base = parts[0]
        self.quals: list[_Qualifier] = []
        col = mnemonic.col + len(parts[0]) + 1
        for part in parts[1:]:
            self.quals.append(_Qualifier(part, col))
            col += len(part) + 1
        self.operands = operands
        self.cell = _Cell(Label("?"), mnemonic)

    def error(self, message: str, tok: Token | None = None) -> SourceError:
        return self.p.error(message, tok or self.tok)

    def qual_error(self, message: str, q: _Qualifier) -> SourceError:
        return SourceError(message, self.p.path, self.tok.line, q.col)

    def build(self) -> _Cell:
        b = self.base
        if b in _LOAD_BASES:
            instr = self.load()
        elif b in _STORE_BASES:
            instr = self.store()
        elif b in _ATOM_BASES:
            instr = self.atom()
        elif b in _RED_BASES:
            instr = self.red()
        elif b == "fence":
            instr = self.fence()
        elif b == "membar":
            instr = self.membar()
        elif b in ("bar", "barrier"):
            instr = self.barrier()
        elif b == "mov":
            self.no_qualifiers()
            self.count(2)
            instr = Mov(self.register(0), self.value(1))
        elif b in _ARITH:
            self.no_qualifiers()
            self.count(3)
            instr = Arith(_ARITH[b], self.register(0), self.value(1), self.value(2))
        elif b in _BRANCHES:
            self.no_qualifiers()
            self.count(3)
            instr = Branch(_BRANCHES[b], self.value(0), self.value(1), self.label(2))
        elif b == "goto":
            self.no_qualifiers()
            self.count(1)
            instr = Goto(self.label(0))
        elif b == "filler":
            instr = self.filler()
        elif b == "griddepcontrol":
            instr = self.griddepcontrol()
        elif b == "mbarrier":
            instr = self.mbarrier()
        elif b == "cp":
            instr = self.copy()
        elif b == "async":
            instr = self.async_read()
        elif b == "tcgen05":
            instr = self.tcgen05()
        else:
            raise self.error(f"unknown instruction {self.tok.text!r}")
        self.cell.instr = instr
        return self.cell

    # operands ---------------------------------------------------------------------------

    def count(self, *allowed: int) -> None:
        n = len(self.operands)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            where = self.operands[max(allowed)] if n > max(allowed) else self.tok
            raise self.error(f"{self.tok.text} takes {want} operand(s), got {n}", where)

    def register(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a register, found {tok.describe()}", tok)
        return tok.text

    def value(self, i: int) -> Operand:
        tok = self.operands[i]
        if tok.kind == NUM:
            return self.p.int_value(tok)
        return self.register(i)

    def location(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not NAME_RE.fullmatch(tok.text) or REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a location, found {tok.describe()}", tok)
        self.cell.locations.append(tok)
        return tok.text

    def label(self, i: int) -> str:
        tok = self.operands[i]
        if tok.kind != WORD or not NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a label, found {tok.describe()}", tok)
        self.cell.targets.append(tok)
        return tok.text

    # qualifiers -------------------------------------------------------------------------

    def no_qualifiers(self) -> None:
        if self.quals:
            q = self.quals[0]
            raise self.qual_error(f"{self.base} takes no qualifier, found '.{q.text}'", q)

    def classify(
        self, allowed: dict[str, dict[str, object]], quals: list[_Qualifier] | None = None
    ) -> dict[str, tuple[object, _Qualifier]]:
        """Sort qualifiers (default: all of them) into categories (sem, scope...), each at most once,
        in any order."""
        found: dict[str, tuple[object, _Qualifier]] = {}
        for q in self.quals if quals is None else quals:
            for category, values in allowed.items():
                if q.text in values:
                    if category in found:
                        raise self.qual_error(f"more than one {category} qualifier in {self.tok.text!r}", q)
                    found[category] = (values[q.text], q)
                    break
            else:
                raise self.qual_error(f"unknown qualifier '.{q.text}' in {self.tok.text!r}", q)
        return found

    def sem_scope(
        self, found: dict[str, tuple[object, _Qualifier]], sems: frozenset[Sem], what: str
    ) -> tuple[Sem, Scope | None]:
        """A load's or store's ``.sem.scope`` (``.weak`` when absent; a scope needs a semantics)."""
        sem, scope = found.get("sem", (None, None)), found.get("scope", (None, None))
        if sem[0] is None and scope[0] is not None:
            raise self.qual_error(f"a scope needs a semantics, as in {self.base}.relaxed.{scope[0]}", scope[1])  # type: ignore[arg-type]
        if sem[0] is None:
            return Sem.WEAK, None
        if sem[0] not in sems:
            raise self.qual_error(f"{what} cannot be .{sem[0]}", sem[1])  # type: ignore[arg-type]
        if sem[0] in (Sem.WEAK, Sem.VOLATILE) and scope[0] is not None:
            raise self.qual_error(f".{sem[0]} takes no scope", scope[1])  # type: ignore[arg-type]
        return sem[0], scope[0]  # type: ignore[return-value]

    def proxy(self, bases: dict[str, Proxy], found: dict[str, tuple[object, _Qualifier]]) -> Proxy:
        proxy = bases[self.base]
        if "proxy" in found:
            if proxy is not Proxy.GENERIC:
                raise self.qual_error(f"'.async' cannot be combined with {self.base}", found["proxy"][1])
            proxy = Proxy.ASYNC
        return proxy

    # instruction kinds ------------------------------------------------------------------

    def load(self) -> Instruction:
        found = self.classify(
            {"sem": _SEMS, "scope": _SCOPES, "proxy": {"async": Proxy.ASYNC}, "space": {"global": "global"}, "nc": {"nc": True},
             **_DSM_QUALIFIER}
        )
        self.count(2)
        dst = self.register(0)
        if self.base == "ld" and not found and self.operands[1].kind == NUM:
            return Mov(dst, self.value(1))
        if "nc" in found or "space" in found:
            self.check_nc(found)
            return Load(dst, self.location(1), nc=True)
        sem, scope = self.sem_scope(found, LOAD_SEMS, "a load")
        return Load(dst, self.location(1), sem, scope, self.proxy(_LOAD_BASES, found), shared_cluster=self.dsm(found))

    def dsm(self, found: dict[str, tuple[object, _Qualifier]]) -> bool:
        """``.shared::cluster`` (distributed shared memory): generic ld/st/atom/red only."""
        if "dsm" not in found:
            return False
        if self.base not in ("ld", "st", "atom", "red") or "proxy" in found:
            raise self.qual_error(f"'.{_DSM_SPACE}' is for generic ld, st, atom and red", found["dsm"][1])
        return True

    def check_nc(self, found: dict[str, tuple[object, _Qualifier]]) -> None:
        """``ld.global.nc`` exactly: no other qualifier, generic ``ld`` only."""
        others = [q for k, (_, q) in found.items() if k not in ("nc", "space")]
        if others:
            raise self.qual_error(f"ld.global.nc takes no other qualifier, found '.{others[0].text}'", others[0])
        if "nc" not in found:
            raise self.qual_error("'.global' is only supported in ld.global.nc", found["space"][1])
        if "space" not in found:
            raise self.qual_error("write '.nc' as ld.global.nc", found["nc"][1])
        if self.base != "ld":
            raise self.error(f"{self.base} cannot be .global.nc (only ld)")

    def store(self) -> Instruction:
        found = self.classify({"sem": _SEMS, "scope": _SCOPES, "proxy": {"async": Proxy.ASYNC}, **_DSM_QUALIFIER})
        self.count(2)
        sem, scope = self.sem_scope(found, STORE_SEMS, "a store")
        return Store(self.location(0), self.value(1), sem, scope, self.proxy(_STORE_BASES, found), shared_cluster=self.dsm(found))

    def rmw_qualifiers(self, bases: dict[str, Proxy]) -> tuple[RmwOp, Sem, Scope, Proxy, bool]:
        found = self.classify(
            {"sem": _SEMS, "scope": _SCOPES, "proxy": {"async": Proxy.ASYNC}, "operation": _RMW_OPS, **_DSM_QUALIFIER}
        )
        if "operation" not in found:
            raise self.error(f"{self.tok.text!r} needs an operation (.add, .cas, .exch...)")
        sem, sem_q = found.get("sem", (Sem.RELAXED, None))
        if sem not in RMW_SEMS:
            raise self.qual_error(f"{self.base} cannot be .{sem}", sem_q)  # type: ignore[arg-type]
        scope = found.get("scope", (Scope.GPU, None))[0]
        return found["operation"][0], sem, scope, self.proxy(bases, found), self.dsm(found)  # type: ignore[return-value]

    def atom(self) -> Instruction:
        op, sem, scope, proxy, dsm = self.rmw_qualifiers(_ATOM_BASES)
        self.count(4 if op is RmwOp.CAS else 3)
        dst, loc = self.register(0), self.location(1)
        operands = tuple(self.value(i) for i in range(2, len(self.operands)))
        return Atom(dst, loc, op, operands, sem, scope, proxy, shared_cluster=dsm)

    def red(self) -> Instruction:
        op, sem, scope, proxy, dsm = self.rmw_qualifiers(_RED_BASES)
        if op in (RmwOp.CAS, RmwOp.EXCH):
            raise self.error(f"red has no .{op}")
        self.count(2)
        return Red(self.location(0), op, self.value(1), sem, scope, proxy, shared_cluster=dsm)

    def fence(self) -> Instruction:
        self.count(0)
        if self.quals and self.quals[0].text == "proxy":
            return self.proxy_fence()
        if self.quals and self.quals[0].text == "mbarrier_init":
            if self.texts() != ["mbarrier_init", "release", "cluster"]:
                raise self.error(f"unknown fence {self.tok.text!r} (fence.mbarrier_init.release.cluster)")
            return FenceMbarrierInit()
        found = self.classify({"sem": _SEMS, "scope": _SCOPES})
        if "sem" not in found or "scope" not in found:
            raise self.error(f"{self.tok.text!r}: a fence needs a semantics and a scope, as in fence.sc.gpu")
        sem, q = found["sem"]
        if sem not in FENCE_SEMS:
            raise self.qual_error(f"fence.{sem} is not a PTX fence (use acq_rel or sc)", q)
        return Fence(sem, found["scope"][0])  # type: ignore[arg-type]

    def proxy_fence(self) -> Instruction:
        if len(self.quals) < 2:
            raise self.error("fence.proxy needs a kind (alias, surface, texture, constant, async)")
        kind_q = self.quals[1]
        kinds = {k.value: k for k in ProxyFenceKind}
        if kind_q.text not in kinds:
            raise self.qual_error(f"unknown proxy fence kind '.{kind_q.text}'", kind_q)
        space = None
        if len(self.quals) > 2:
            space_q = self.quals[2]
            if space_q.text not in _PROXY_FENCE_SPACES or len(self.quals) > 3:
                bad = space_q if space_q.text not in _PROXY_FENCE_SPACES else self.quals[3]
                raise self.qual_error(
                    f"bad proxy fence state space '.{bad.text}' (global, shared::cta, shared::cluster)", bad
                )
            space = space_q.text
        return ProxyFence(kinds[kind_q.text], space)

    def membar(self) -> Instruction:
        self.count(0)
        if len(self.quals) != 1 or self.quals[0].text not in _MEMBAR:
            raise self.error(f"{self.tok.text!r}: expected membar.cta, membar.gl or membar.sys")
        return Fence(Sem.SC, _MEMBAR[self.quals[0].text])

    def cluster_barrier(self) -> Instruction:
        """``barrier.cluster.arrive{.release|.relaxed}{.aligned}``, ``barrier.cluster.wait{.acquire}{.aligned}``."""
        texts = self.texts()[1:]
        if texts and texts[-1] == "aligned":
            texts = texts[:-1]
        mode = texts[0] if texts else ""
        if mode not in _CLUSTER_BARRIER_SEMS or len(texts) > 2 or (len(texts) == 2 and texts[1] not in _CLUSTER_BARRIER_SEMS[mode]):
            raise self.error(
                f"unknown barrier {self.tok.text!r} (barrier.cluster.arrive{{.release,.relaxed}} or barrier.cluster.wait{{.acquire}})"
            )
        self.count(0)
        return ClusterBarrier(mode, _CLUSTER_BARRIER_SEMS[mode][texts[1]] if len(texts) == 2 else None)

    def barrier(self) -> Instruction:
        texts = [q.text for q in self.quals]
        if self.base == "barrier" and texts and texts[0] == "cluster":
            return self.cluster_barrier()
        dat3m = bool(texts) and texts[0] == "cta"
        if dat3m:
            texts = texts[1:]
        if texts not in (["sync"], ["arrive"]):
            raise self.error(f"unknown barrier {self.tok.text!r} (bar{{.cta}}.sync or bar{{.cta}}.arrive)")
        mode = texts[0]
        n = len(self.operands)
        if not dat3m:  # PTX: bar.sync id{, count}
            self.count(1, 2)
            return Barrier(id=self.value(0), count=self.barrier_count(1) if n == 2 else None, mode=mode)
        # Dat3M: bar.cta.sync id | bar.cta.sync instance, id{, quorum}
        self.count(1, 2, 3)
        if n == 1:
            return Barrier(id=self.value(0), mode=mode)
        instance = self.operands[0]
        if instance.kind != NUM:
            raise self.error(f"the barrier instance must be a number, found {instance.describe()}", instance)
        count = self.barrier_count(2) if n == 3 else None
        return Barrier(id=self.value(1), count=count, mode=mode, instance=self.p.int_value(instance))

    def barrier_count(self, i: int) -> Operand | None:
        tok = self.operands[i]
        if tok.kind == WORD and tok.text == "all":
            return None
        return self.value(i)

    def texts(self) -> list[str]:
        return [q.text for q in self.quals]

    def number(self, i: int) -> int:
        tok = self.operands[i]
        if tok.kind != NUM:
            raise self.error(f"expected a number, found {tok.describe()}", tok)
        return self.p.int_value(tok)

    def griddepcontrol(self) -> Instruction:
        if len(self.quals) != 1 or self.quals[0].text not in _GRIDDEP_ACTIONS:
            raise self.error(f"unknown {self.tok.text!r} (griddepcontrol.launch_dependents or griddepcontrol.wait)")
        self.count(0)
        return GridDepControl(self.quals[0].text)

    def tcgen05(self) -> Instruction:
        texts = self.texts()
        if len(texts) != 1 or not texts[0].startswith("fence::") or texts[0][7:] not in _TCGEN05_FENCES:
            raise self.error(f"unknown {self.tok.text!r} (tcgen05.fence::before_thread_sync or ::after_thread_sync)")
        self.count(0)
        return Tcgen05Fence(texts[0][7:])

    def async_read(self) -> Instruction:
        if self.texts() != ["read"]:
            raise self.error(f"unknown instruction {self.tok.text!r} (async.read)")
        self.count(2)
        return AsyncRead(self.register(0), self.location(1))

    def mbarrier_sem_scope(self, quals: list[_Qualifier], sems: dict[str, Sem], default: Sem) -> tuple[Sem, Scope]:
        found = self.classify({"sem": sems, "scope": _MBAR_SCOPES}, quals)
        sem = found["sem"][0] if "sem" in found else default
        scope = found["scope"][0] if "scope" in found else Scope.CTA
        return sem, scope  # type: ignore[return-value]

    def mbarrier(self) -> Instruction:
        texts = self.texts()
        op = texts[0] if texts else ""
        rest = self.quals[1:]
        if op == "init" and not rest:
            self.count(2)
            return MbarrierInit(self.location(0), self.number(1))
        if op == "expect_tx" and not rest:
            self.count(2)
            return MbarrierExpectTx(self.location(0), self.number(1))
        if op == "arrive":
            expect = bool(rest) and rest[0].text == "expect_tx"
            rest = rest[1:] if expect else rest
            dsm = bool(rest) and rest[-1].text == _DSM_SPACE
            rest = rest[:-1] if dsm else rest
            sem, scope = self.mbarrier_sem_scope(rest, _MBAR_ARRIVE_SEMS, Sem.RELEASE)
            self.count(*((2, 3) if expect else (1, 2)))
            tx = self.number(1) if expect else None
            extra = 2 if expect else 1
            count = self.number(extra) if len(self.operands) > extra else 1
            return MbarrierArrive(self.location(0), sem, scope, tx, count, shared_cluster=dsm)
        if op in ("try_wait", "test_wait"):
            if not rest or rest[0].text != "parity":
                raise self.error(f"{self.tok.text!r}: write mbarrier.{op}.parity")
            sem, scope = self.mbarrier_sem_scope(rest[1:], _MBAR_WAIT_SEMS, Sem.ACQUIRE)
            self.count(3)
            return MbarrierWait(self.register(0), self.location(1), self.number(2), op, sem, scope)
        raise self.error(
            f"unknown instruction {self.tok.text!r} (mbarrier.init, .arrive, .expect_tx, .try_wait.parity, .test_wait.parity)"
        )

    def copy(self) -> Instruction:
        """``cp.async...`` and ``cp.reduce.async.bulk...``."""
        texts = self.texts()
        if texts[:1] == ["reduce"]:
            return self.bulk_copy(texts[1:], reduce=True)
        if texts[:2] == ["async", "bulk"]:
            return self.bulk_copy(texts, reduce=False)
        if texts[:2] in (["async", "ca"], ["async", "cg"]):
            # PTX spelling: cp.async.ca.shared.global s, g (or .cg); the size operand is not written
            if texts[2:] not in (["shared", "global"], ["shared::cta", "global"]):
                raise self.error(f"unknown instruction {self.tok.text!r} (cp.async.{texts[1]}.shared.global DST, SRC)")
            self.count(2)
            self.expect_space(0, Space.SHARED)
            self.expect_space(1, Space.GLOBAL)
            return CpAsync(self.location(0), self.location(1))
        simple = {
            ("async",): lambda: CpAsync(self.location(0), self.location(1)),
            ("async", "commit_group"): CpAsyncCommit,
            ("async", "wait_all"): lambda: CpAsyncWait(None),
            ("async", "wait_group"): lambda: CpAsyncWait(self.number(0)),
            ("async", "mbarrier", "arrive", "noinc"): lambda: CpAsyncMbarrierArrive(self.location(0)),
        }
        arity = {("async",): 2, ("async", "wait_group"): 1, ("async", "mbarrier", "arrive", "noinc"): 1}
        key = tuple(texts)
        if key == ("async", "mbarrier", "arrive"):
            raise self.error(
                f"write {self.tok.text}.noinc: the arrival of cp.async.mbarrier.arrive counts against the mbarrier's "
                "expected arrivals only in the .noinc form (without it the pending count is first incremented)"
            )
        if key not in simple:
            raise self.error(f"unknown instruction {self.tok.text!r}")
        self.count(arity.get(key, 0))
        return simple[key]()

    def expect_space(self, i: int, space: Space) -> None:
        if i < len(self.operands):
            self.cell.spaces.append((self.operands[i], space))

    def bulk_copy(self, texts: list[str], reduce: bool) -> Instruction:
        if texts[:2] != ["async", "bulk"] or len(texts) < 3:
            raise self.error(f"unknown instruction {self.tok.text!r}")
        tail = texts[2:]
        if not reduce and tail == ["commit_group"]:
            self.count(0)
            return BulkCommit()
        if not reduce and tail in (["wait_group"], ["wait_group", "read"]):
            self.count(1)
            return BulkWait(self.number(0), read=len(tail) == 2)
        if tail[0] in _COPY_SPACES:
            return self.bulk_copy_spaces(tail, reduce)
        completion, ops = tail[0], tail[1:]
        if completion not in _BULK_COMPLETIONS or len(ops) != (1 if reduce else 0):
            raise self.error(
                f"unknown instruction {self.tok.text!r} (cp{{.reduce}}.async.bulk.mbarrier or .bulk_group{{.op}}, "
                "or the PTX form cp{.reduce}.async.bulk.DST.SRC{.COMPLETION}{.op})"
            )
        op = self.reduction(ops[0]) if reduce else None
        self.count(4 if completion == "mbarrier" else 3)
        dst, src, size = self.location(0), self.location(1), self.number(2)
        bar = self.location(3) if completion == "mbarrier" else None
        return CpAsyncBulk(dst, src, completion, bar, op, size)

    def reduction(self, text: str) -> RmwOp:
        if text not in _RMW_OPS:
            raise self.error(f"unknown reduction '.{text}' in {self.tok.text!r}")
        return _RMW_OPS[text]

    def bulk_copy_spaces(self, tail: list[str], reduce: bool) -> Instruction:
        """The PTX form ``cp{.reduce}.async.bulk.DST.SRC{.COMPLETION}{.op} dst, src{, size}{, bar}``:
        ``DST``/``SRC`` are ``global``, ``shared`` (``shared::cta``, ``shared::cluster``) and must match
        the declared locations; the completion defaults to ``mbarrier`` for a copy into shared memory and
        ``bulk_group`` for one into global memory; the size defaults to 4 bytes."""
        if len(tail) < 2 or tail[1] not in _COPY_SPACES:
            raise self.error(f"{self.tok.text!r}: write the destination and the source state space, as in cp.async.bulk.shared.global")
        dst_space, src_space = _COPY_SPACES[tail[0]], _COPY_SPACES[tail[1]]
        rest = tail[2:]
        if rest and rest[0] in _BULK_COMPLETION_SPELLINGS:
            completion = _BULK_COMPLETION_SPELLINGS[rest[0]]
            rest = rest[1:]
        else:
            completion = "mbarrier" if dst_space is Space.SHARED else "bulk_group"
        if len(rest) != (1 if reduce else 0):
            what = "one reduction (.add, .min...)" if reduce else "nothing"
            raise self.error(f"{self.tok.text!r}: after the state spaces and completion comes {what}")
        op = self.reduction(rest[0]) if reduce else None
        with_bar = completion == "mbarrier"
        self.count(*((3, 4) if with_bar else (2, 3)))
        sized = len(self.operands) == (4 if with_bar else 3)
        dst, src = self.location(0), self.location(1)
        size = self.number(2) if sized else 4
        bar = self.location(len(self.operands) - 1) if with_bar else None
        self.expect_space(0, dst_space)
        self.expect_space(1, src_space)
        return CpAsyncBulk(dst, src, completion, bar, op, size)

    def filler(self) -> Instruction:
        if len(self.quals) != 1 or self.quals[0].text not in FILLER_KINDS:
            raise self.error(f"unknown filler {self.tok.text!r} (filler.regloop, filler.smem, filler.delay)")
        self.count(1)
        tok = self.operands[0]
        if tok.kind != NUM:
            raise self.error(f"expected a number, found {tok.describe()}", tok)
        return Filler(self.quals[0].text, self.p.int_value(tok))


# --------------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------------


def parse(text: str, path: str = "<input>") -> Program:
    """Parse litmus text; raise :class:`SourceError` (``path:line:col: message``) if it is malformed."""
    return _Parser(text, path).parse()


def parse_file(path: str | Path) -> Program:
    """Parse a ``.litmus`` file: a regular file (a FIFO or a device is refused without blocking;
    a symbolic link named on purpose is followed) of at most :data:`MAX_LITMUS_BYTES` bytes."""
    from .files import UnreadableFile, read_regular

    try:
        data = read_regular(path, MAX_LITMUS_BYTES, follow_symlinks=True)
    except UnreadableFile as e:
        raise SourceError(f"cannot read: {e} (expected a .litmus text file of at most {MAX_LITMUS_BYTES} bytes)",
                          str(path), 0, 0) from None
    except OSError as e:
        raise SourceError(f"cannot read: {e.strerror or e}", str(path), 0, 0) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SourceError(f"not UTF-8 text ({e.reason})", str(path), 1, 1) from None
    return parse(text, str(path))


def parse_path_tree(paths: Iterable[str | Path]) -> list[Path]:
    """Expand folders (recursively) to their ``.litmus`` files, sorted; files are kept as given."""
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(f for f in p.rglob("*.litmus") if f.is_file()))
        else:
            out.append(p)
    return out


# --------------------------------------------------------------------------------------------
# Printer
# --------------------------------------------------------------------------------------------


def format_program(p: Program) -> str:
    """Write ``p`` in the litmus dialect.  Raise ``ValueError`` for what the dialect cannot express
    (a name with whitespace, a comment with a double quote, an unknown instruction type...)."""
    if p.arch != "PTX":
        raise ValueError(f"only PTX programs can be written as litmus text, not {p.arch!r}")
    if not p.name or any(c in _SPACE for c in p.name):
        raise ValueError(f"test name {p.name!r} must be non-empty and have no whitespace")
    lines = [f"PTX {p.name}"]
    for c in p.comments:
        if '"' in c:
            raise ValueError(f"a comment cannot contain a double quote: {c!r}")
        lines.append(f'"{c}"')
    lines.append("{")
    lines.extend(f"{_format_location(loc)};" for loc in p.locations)
    if len(set(p.pdl_grids)) != len(p.pdl_grids):
        raise ValueError(f"PDL grids repeated: {p.pdl_grids}")
    lines.extend(f"grid {g} @ pdl;" for g in p.pdl_grids)
    for t in p.threads:
        lines.extend(f"{t.name}:{reg}={value};" for reg, value in t.init)
    lines.append("}")
    lines.extend(_format_table(p.threads))
    if p.observed:
        lines.append("locations [" + " ".join(f"{_check_observed(o)};" for o in p.observed) + "]")
    if p.condition is not None:
        lines.append(_format_condition(p.condition))
    return "\n".join(lines) + "\n"


def _check_observed(key: str) -> str:
    thread, _, reg = key.partition(":")
    if (reg and NAME_RE.fullmatch(thread) and REGISTER_RE.fullmatch(reg)) or (not reg and NAME_RE.fullmatch(key)):
        return key
    raise ValueError(f"bad observed key {key!r}")


def _format_location(loc: Location) -> str:
    attrs = []
    if loc.proxy is not Proxy.GENERIC or loc.alias_of is not None:
        attrs.append(loc.proxy.value)
    if loc.space is not Space.GLOBAL:
        attrs.append(loc.space.value)
    if loc.kind != "data":
        if loc.kind not in _LOC_KINDS:
            raise ValueError(f"location kind {loc.kind!r} has no litmus syntax")
        attrs.append(loc.kind)
    if loc.cta is not None:
        attrs.append(f"cta {loc.cta}")
    text = loc.name
    if attrs:
        text += " @ " + " ".join(attrs)
    if loc.alias_of is not None:
        text += f" aliases {loc.alias_of}"
    if loc.alias_of is None or loc.init != 0:
        text += f" = {loc.init}" if attrs else f"={loc.init}"
    return text


def _format_placement(pl: Placement) -> str:
    for key in _PLACEMENT_KEYS:
        value = getattr(pl, key)
        if value is not None and (not isinstance(value, int) or value < 0):
            raise ValueError(f"placement {key} {value!r} is not a non-negative integer")
    parts = [f"cta {pl.cta}", f"gpu {pl.gpu}"]
    if pl.grid != 0:
        parts.append(f"grid {pl.grid}")
    if pl.cluster is not None:
        parts.append(f"cluster {pl.cluster}")
    if pl.warp is not None:
        parts.append(f"warp {pl.warp}")
    return ",".join(parts)


def _format_table(threads: tuple[Thread, ...]) -> list[str]:
    columns = [[f"{t.name}@{_format_placement(t.placement)}"] + [format_instruction(i) for i in t.code] for t in threads]
    height = max(len(c) for c in columns) if columns else 0
    widths = [max(len(cell) for cell in c) for c in columns]
    lines = []
    for row in range(height):
        cells = [(c[row] if row < len(c) else "").ljust(w) for c, w in zip(columns, widths)]
        lines.append(" " + " | ".join(cells) + " ;")
    return lines


def _operand(v: Operand) -> str:
    return str(v)


def _sem_scope(sem: Sem, scope: Scope | None) -> str:
    return f".{sem.value}" + (f".{scope.value}" if scope is not None else "")


def _dsm(shared_cluster: bool) -> str:
    return f".{_DSM_SPACE}" if shared_cluster else ""


def _proxied(base: str, proxy: Proxy) -> str:
    if proxy is Proxy.ASYNC:
        return f"{base}.async"
    return _PROXY_PREFIX[proxy] + base


def format_instruction(ins: Instruction) -> str:
    """One instruction as a table cell (``ld.acquire.gpu r0, x``)."""
    if isinstance(ins, Load):
        if ins.nc:
            return f"ld.global.nc {ins.dst}, {ins.loc}"
        return f"{_proxied('ld', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)} {ins.dst}, {ins.loc}"
    if isinstance(ins, Store):
        return f"{_proxied('st', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)} {ins.loc}, {_operand(ins.src)}"
    if isinstance(ins, Atom):
        ops = ", ".join(_operand(v) for v in ins.operands)
        head = f"{_proxied('atom', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.dst}, {ins.loc}, {ops}"
    if isinstance(ins, Red):
        head = f"{_proxied('red', ins.proxy)}{_sem_scope(ins.sem, ins.scope)}{_dsm(ins.shared_cluster)}.{ins.operation.value}"
        return f"{head} {ins.loc}, {_operand(ins.value)}"
    if isinstance(ins, Fence):
        return f"fence.{ins.sem.value}.{ins.scope.value}"
    if isinstance(ins, ProxyFence):
        if ins.space is not None and ins.space not in _PROXY_FENCE_SPACES:
            raise ValueError(f"proxy fence state space {ins.space!r} has no litmus syntax")
        return f"fence.proxy.{ins.kind.value}" + (f".{ins.space}" if ins.space else "")
    if isinstance(ins, Barrier):
        return _format_barrier(ins)
    if isinstance(ins, Mov):
        return f"ld {ins.dst}, {ins.src}" if isinstance(ins.src, int) else f"mov {ins.dst}, {ins.src}"
    if isinstance(ins, Arith):
        return f"{ins.operation.value} {ins.dst}, {_operand(ins.a)}, {_operand(ins.b)}"
    if isinstance(ins, Label):
        return f"{_label(ins.name)}:"
    if isinstance(ins, Branch):
        return f"b{ins.cond.value} {_operand(ins.a)}, {_operand(ins.b)}, {_label(ins.target)}"
    if isinstance(ins, Goto):
        return f"goto {_label(ins.target)}"
    if isinstance(ins, Filler):
        return f"filler.{ins.kind} {ins.n}"
    text = _format_extension(ins)
    return text if text is not None else _format_json(instruction_to_json(ins))


def _format_extension(ins: Instruction) -> str | None:
    """PDL, mbarrier, async-proxy and cp.async instructions; ``None`` for other types."""
    if isinstance(ins, GridDepControl):
        return f"griddepcontrol.{ins.action}" if ins.action in _GRIDDEP_ACTIONS else None
    if isinstance(ins, Tcgen05Fence):
        return f"tcgen05.fence::{ins.kind}" if ins.kind in _TCGEN05_FENCES else None
    if isinstance(ins, AsyncRead):
        return f"async.read {ins.dst}, {ins.loc}"
    if isinstance(ins, MbarrierInit):
        return f"mbarrier.init {ins.bar}, {ins.count}"
    if isinstance(ins, MbarrierExpectTx):
        return f"mbarrier.expect_tx {ins.bar}, {ins.tx}"
    if isinstance(ins, MbarrierArrive):
        if ins.sem.value not in _MBAR_ARRIVE_SEMS or ins.scope.value not in _MBAR_SCOPES:
            return None
        head = "mbarrier.arrive" + (".expect_tx" if ins.expect_tx is not None else "")
        args = [ins.bar] + ([str(ins.expect_tx)] if ins.expect_tx is not None else [])
        args += [str(ins.count)] if ins.count != 1 else []
        return f"{head}.{ins.sem.value}.{ins.scope.value}{_dsm(ins.shared_cluster)} {', '.join(args)}"
    if isinstance(ins, MbarrierWait):
        if ins.sem.value not in _MBAR_WAIT_SEMS or ins.scope.value not in _MBAR_SCOPES or ins.kind not in ("try_wait", "test_wait"):
            return None
        return f"mbarrier.{ins.kind}.parity.{ins.sem.value}.{ins.scope.value} {ins.dst}, {ins.bar}, {ins.parity}"
    if isinstance(ins, CpAsyncBulk):
        if ins.completion not in _BULK_COMPLETIONS or (ins.bar is not None) != (ins.completion == "mbarrier"):
            return None
        head = ("cp.reduce" if ins.reduce is not None else "cp") + f".async.bulk.{ins.completion}"
        head += f".{ins.reduce.value}" if ins.reduce is not None else ""
        bar = f", {ins.bar}" if ins.bar is not None else ""
        return f"{head} {ins.dst_loc}, {ins.src_loc}, {ins.size}{bar}"
    if isinstance(ins, BulkCommit):
        return "cp.async.bulk.commit_group"
    if isinstance(ins, BulkWait):
        return f"cp.async.bulk.wait_group{'.read' if ins.read else ''} {ins.n}"
    if isinstance(ins, CpAsync):
        return f"cp.async {ins.dst_loc}, {ins.src_loc}"
    if isinstance(ins, CpAsyncCommit):
        return "cp.async.commit_group"
    if isinstance(ins, CpAsyncWait):
        return "cp.async.wait_all" if ins.n is None else f"cp.async.wait_group {ins.n}"
    if isinstance(ins, CpAsyncMbarrierArrive):
        return f"cp.async.mbarrier.arrive.noinc {ins.bar}"
    if isinstance(ins, ClusterBarrier):
        sems = _CLUSTER_BARRIER_SEMS.get(ins.mode)
        if sems is None:
            return None
        names = {v: k for k, v in sems.items()}
        if ins.sem is not None and ins.sem not in names:
            return None
        return f"barrier.cluster.{ins.mode}" + (f".{names[ins.sem]}" if ins.sem is not None else "")
    if isinstance(ins, FenceMbarrierInit):
        return "fence.mbarrier_init.release.cluster"
    return None


def _format_json(value: object) -> str:
    """JSON for the generic instruction form; strings must not need escapes."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_format_json(k)}: {_format_json(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_json(v) for v in value) + "]"
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and not any(c in value for c in '"\\\n'):
        return f'"{value}"'
    raise ValueError(f"{value!r} cannot be written in a litmus JSON instruction")


def _label(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.fullmatch(name):
        raise ValueError(f"label {name!r} is not an identifier")
    return name


def _format_barrier(b: Barrier) -> str:
    """Dat3M's ``bar.cta.sync id`` / ``bar.cta.sync instance, id{, quorum}``; PTX's
    ``bar.sync id, count`` when there is a count but no instance."""
    if b.instance is None:
        if b.count is None:
            return f"bar.cta.{b.mode} {b.id}"
        return f"bar.{b.mode} {b.id}, {b.count}"
    if b.count is None:
        return f"bar.cta.{b.mode} {b.instance}, {b.id}"
    return f"bar.cta.{b.mode} {b.instance}, {b.id}, {b.count}"


def _format_condition(c: Condition) -> str:
    if _depth(c.expr) > MAX_PRINTED_DEPTH:
        raise ValueError(f"condition nested more than {MAX_PRINTED_DEPTH} deep")
    return f"{c.quantifier} ({_format_expr(c.expr, top=True)})"


def _depth(e: Expr) -> int:
    """Nesting depth of an expression tree (iterative: the tree may be deep)."""
    deepest, stack = 0, [(e, 1)]
    while stack:
        node, d = stack.pop()
        deepest = max(deepest, d)
        if isinstance(node, Not):
            stack.append((node.arg, d + 1))
        elif isinstance(node, (And, Or)):
            stack.extend((a, d + 1) for a in node.args)
    return deepest


def _format_expr(e: Expr, top: bool = False) -> str:
    if isinstance(e, BoolConst):
        return "true" if e.value else "false"
    if isinstance(e, Cmp):
        if e.op not in _CMP_PUNCT.values():
            raise ValueError(f"unknown comparison {e.op!r}")
        return f"{_format_term(e.lhs)} {e.op} {_format_term(e.rhs)}"
    if isinstance(e, Not):
        return f"~({_format_expr(e.arg, top=True)})"
    if isinstance(e, (And, Or)):
        op = "/\\" if isinstance(e, And) else "\\/"
        if len(e.args) < 2:
            inner = f"{op} " + "".join(_format_expr(a) for a in e.args)
            return f"({inner.rstrip()})"
        text = f" {op} ".join(_format_expr(a) for a in e.args)
        return text if top else f"({text})"
    raise ValueError(f"not a condition expression: {e!r}")


def _format_term(t: Term) -> str:
    if isinstance(t, RegRef):
        return f"{t.thread}:{t.reg}"
    if isinstance(t, LocRef):
        return t.loc
    return str(t)
