"""The recursive-descent parser of the litmus dialect and its entry points."""

from __future__ import annotations

import dataclasses
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from .. import semantics
from ..errors import SourceError, SourceWarning
from .. import ir
from .builder import Cell, InstructionBuilder
from .mnemonics import CMP_PUNCT, LOC_KINDS, MNEMONICS, PLACEMENT_KEYS
from .tokens import (BLANK_RUN, EOF, MAX_LITMUS_BYTES, MAX_TOKENS, NOT_SPACE_RUN, NUM, PUNCT, SPACE_RUN, STR, WORD, Token, Tokenizer,
                     run_end)

MAX_NESTING = 100  # condition parentheses / negations
_LOC_PROXIES = {p.value: p for p in ir.Proxy if p is not ir.Proxy.TENSORMAP}  # "tensormap" is a location kind
_LOC_SPACES = {s.value: s for s in ir.Space}
_QUANTIFIERS = ("exists", "forall", "final")
_JSON_WORDS: dict[str, object] = {"true": True, "false": False, "null": None}
_VALIDATE_WHERE = re.compile(r"^(\w+), instruction (\d+) ")


@dataclass
class _ThreadHeader:
    name: str
    token: Token
    placement: ir.Placement


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.name, self.arch, start, line, line_start = self._header()
        self._stream = Tokenizer(text, path, start, line, line_start).tokens()
        self._ahead: list[Token] = []  # tokens read from the stream, not yet consumed
        self._behind: list[Token] = []  # the last two consumed
        self._count = 0  # tokens read
        self._comparisons = 0  # in the condition
        self.first = self._fill(0)
        self.comments: list[str] = []
        self.locations: dict[str, ir.Location] = {}
        self.location_tokens: dict[str, Token] = {}
        self.register_inits: list[tuple[Token, Token, int]] = []  # (thread token, register token, value)
        self.headers: list[_ThreadHeader] = []
        self.thread_names: set[str] = set()
        self.cells: list[list[Cell]] = []
        self.observed: list[str] = []
        self.condition: ir.Condition | None = None
        self.condition_token: Token | None = None
        self.condition_registers: list[tuple[Token, Token]] = []  # (thread, register) named in the condition
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
        if tok.kind != WORD or not ir.NAME_RE.fullmatch(tok.text):
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
        if not -ir.MAX_VALUE < value < ir.MAX_VALUE:
            raise self.error(f"value {value} does not fit in 32 bits", tok)
        return value

    # -- header, comments, init block ------------------------------------------------------

    def _header(self) -> tuple[str, str, int, int, int]:
        """``PTX NAME`` on the first non-blank line; the name is everything up to whitespace."""
        text = self.text
        pos, line, line_start = 0, 1, 0
        pos = run_end(SPACE_RUN, text)
        if "\n" in text[:pos]:
            line, line_start = 1 + text.count("\n", 0, pos), text.rindex("\n", 0, pos) + 1
        word_end = run_end(NOT_SPACE_RUN, text, pos)
        if text[pos:word_end] not in ("PTX", "ptx"):
            found = text[pos : min(word_end, pos + 40)] or "end of input"
            raise SourceError(f"expected 'PTX TESTNAME' header, found {found!r}" + ("..." if word_end > pos + 40 else ""),
                              self.path, line, pos - line_start + 1)
        name_start = word_end
        name_start = run_end(BLANK_RUN, text, name_start)
        name_end = run_end(NOT_SPACE_RUN, text, name_start)
        if name_end == name_start:
            raise SourceError("missing test name after 'PTX'", self.path, line, name_start - line_start + 1)
        return text[name_start:name_end], "PTX", name_end, line, line_start

    def parse(self) -> ir.Program:
        while self.peek().kind == STR:
            if len(self.comments) == ir.MAX_COMMENTS:
                raise self.error(f"more than {ir.MAX_COMMENTS} comment strings (the limit of a litmus test)", self.peek())
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

    def _separator(self, close: str, where: str) -> None:
        """A ';' between the items of a list (consumed), or its closing ``close`` (left for the caller)."""
        if self.at(";"):
            self.next()
        elif not self.at(close):
            tok = self.peek()
            raise self.error(f"expected ';' or '{close}' {where}, found {tok.describe()}", tok)

    def parse_init_block(self) -> None:
        self.expect("{", " to open the init block")
        while not self.at("}"):
            self.parse_declaration()
            self._separator("}", "after a declaration")
        self.next()
        if self.at(";"):
            self.next()

    def parse_declaration(self) -> None:
        first = self.peek()
        if first.kind == WORD and first.text == "grid" and self.peek(1).kind == NUM:
            self.parse_grid_declaration()
            return
        if self.at_thread_register(first):
            thread, reg = self.parse_thread_register()
            self.expect("=", " after the register")
            if len(self.register_inits) == ir.MAX_THREADS * ir.MAX_INIT_REGISTERS:
                raise self.error(f"more than {ir.MAX_THREADS * ir.MAX_INIT_REGISTERS} initialised registers "
                                 "(the limit of a litmus test)", reg)
            self.register_inits.append((thread, reg, self.expect_int("an initial value")))
            return
        name = self.expect_name("a location declaration")
        self.check_location_name(name)
        if name.text in self.locations:
            raise self.error(f"location {name.text!r} declared twice", name)
        loc = ir.Location(name.text)
        if self.at("@"):
            loc = self.parse_location_attributes(loc)
            if self.at("=") and loc.kind == "tensormap" and self.peek(1).kind == WORD:  # ``m @ tensormap = g``: it names g
                self.next()
                loc = _replace(loc, target=self.expect_name("the location the tensor map names").text)
            elif self.at("="):
                self.next()
                loc = _replace(loc, init=self.expect_int("an initial value"))
            elif loc.alias_of is None:
                tok = self.peek()
                raise self.error(f"expected '=' or 'aliases' in the declaration of {name.text!r}, found {tok.describe()}", tok)
        else:
            self.expect("=", f" after location {name.text!r}")
            loc = _replace(loc, init=self.expect_int("an initial value"))
        self.add_location(name, loc)

    def add_location(self, tok: Token, loc: ir.Location) -> None:
        if len(self.locations) == ir.MAX_LOCATIONS:
            raise self.error(f"more than {ir.MAX_LOCATIONS} locations (the limit of a litmus test)", tok)
        self.locations[tok.text] = loc
        self.location_tokens[tok.text] = tok

    def parse_grid_declaration(self) -> None:
        """``grid N @ pdl``: grid N is launched as a programmatic dependent of grid N-1."""
        self.next()
        number = self.peek()
        grid = self.expect_int("a grid number", minimum=1)
        if len(self.pdl_grids) == ir.MAX_THREADS:
            raise self.error(f"more than {ir.MAX_THREADS} PDL grids (the limit of a litmus test)", number)
        if grid in self.pdl_grids:
            raise self.error(f"grid {grid} declared twice", number)
        self.expect("@", f" after 'grid {grid}'")
        attr = self.next()
        if attr.kind != WORD or attr.text != "pdl":
            raise self.error(f"expected 'pdl' (the only grid attribute), found {attr.describe()}", attr)
        self.pdl_grids.append(grid)

    def parse_location_attributes(self, loc: ir.Location) -> ir.Location:
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
            elif tok.text in LOC_KINDS and "kind" not in seen:
                seen.add("kind")
                loc = _replace(loc, kind=tok.text)
            elif tok.text == "cta" and "cta" not in seen:
                seen.add("cta")
                loc = _replace(loc, cta=self.expect_int("the CTA of the shared location", minimum=0))
            else:
                raise self.error(
                    f"bad location attribute {tok.text!r} (a proxy, global or shared, mbarrier, tensormap or tmem, cta N; once each)", tok
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
        if ir.REGISTER_RE.fullmatch(tok.text):
            raise self.error(f"expected a location, found register {tok.text!r}", tok)

    def at_thread_register(self, tok: Token) -> bool:
        """Whether ``tok`` (the next token) starts a register of a thread, ``P0:r1`` or ``0:r1``."""
        return tok.kind == NUM or (tok.kind == WORD and self.at(":", 1))

    def parse_thread_register(self) -> tuple[Token, Token]:
        """``THREAD:REGISTER``: the thread's and the register's tokens."""
        thread = self.parse_thread_ref()
        self.expect(":")
        reg = self.next()
        if reg.kind != WORD or not ir.REGISTER_RE.fullmatch(reg.text):
            raise self.error(f"expected a register (r0, r1...), found {reg.describe()}", reg)
        return thread, reg

    def parse_thread_ref(self) -> Token:
        """``P1`` or ``1`` (the thread number form, meaning ``P1``)."""
        tok = self.next()
        if tok.kind == NUM:
            if tok.text.startswith("-"):
                raise self.error(f"bad thread number {tok.text}", tok)
            return Token(WORD, f"P{int(tok.text)}", tok.line, tok.col)
        if tok.kind != WORD or not ir.NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a thread name, found {tok.describe()}", tok)
        return tok

    # -- threads and instruction rows ------------------------------------------------------

    def parse_thread_headers(self) -> None:
        while True:
            if len(self.headers) == ir.MAX_THREADS:
                raise self.error(f"more than {ir.MAX_THREADS} threads (the limit of a litmus test)", self.peek())
            self.headers.append(self.parse_thread_header())
            tok = self.next()
            if tok.kind == PUNCT and tok.text == ";":
                break
            if not (tok.kind == PUNCT and tok.text == "|"):
                raise self.error(f"expected '|' or ';' in the thread header row, found {tok.describe()}", tok)
        self.cells = [[] for _ in self.headers]

    def parse_thread_header(self) -> _ThreadHeader:
        tok = self.next()
        if tok.kind != WORD or not ir.NAME_RE.fullmatch(tok.text):
            raise self.error(f"expected a thread header such as 'P0@cta 0,gpu 0', found {tok.describe()}", tok)
        if tok.text in self.thread_names:
            raise self.error(f"thread {tok.text!r} declared twice", tok)
        self.thread_names.add(tok.text)
        placement = ir.Placement()
        if self.at("@"):
            self.next()
            placement = self.parse_placement()
        return _ThreadHeader(tok.text, tok, placement)

    def parse_placement(self) -> ir.Placement:
        values: dict[str, int] = {}
        while True:
            key = self.next()
            if key.kind != WORD or key.text not in PLACEMENT_KEYS:
                raise self.error(
                    f"bad placement: expected one of {', '.join(PLACEMENT_KEYS)}, found {key.describe()}", key
                )
            if key.text in values:
                raise self.error(f"bad placement: {key.text!r} given twice", key)
            values[key.text] = self.expect_int(f"the {key.text} number", minimum=0)
            if not self.at(","):
                return ir.Placement(**values)
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
            if rows > ir.MAX_THREADS * ir.MAX_INSTRUCTIONS:
                raise self.error(f"more than {ir.MAX_THREADS * ir.MAX_INSTRUCTIONS} rows (the limit of a litmus test)", self.peek())
            column = 0
            while True:
                cell = self.parse_cell()
                if cell is not None:
                    if len(self.cells[column]) == ir.MAX_INSTRUCTIONS:
                        raise self.error(f"thread {self.headers[column].name} has more than {ir.MAX_INSTRUCTIONS} instructions "
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

    def parse_cell(self) -> Cell | None:
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
            if not ir.NAME_RE.fullmatch(tok.text):
                raise self.error(f"bad label name {tok.text!r}", tok)
            return Cell(ir.Label(tok.text), tok)
        if tok.text.split(".", 1)[0] not in MNEMONICS:
            raise self.error(f"unknown instruction {tok.text!r}", tok)
        operands = self.parse_operands()
        return InstructionBuilder(self, tok, operands).build()

    def parse_json_instruction(self) -> Cell:
        """The generic form of an instruction the dialect has no mnemonic for (an extension registered
        with :func:`fuzzgpu.ir.register_instruction`): its JSON object, ``{"op": "tag", ...}``."""
        start = self.peek()
        obj = self.parse_json_value(0)
        if not isinstance(obj, dict):
            raise self.error("expected a JSON object", start)
        try:
            instr = ir.instruction_from_json(obj)
        except (ir.ProgramError, TypeError) as e:
            raise self.error(str(e), start) from None
        cell = Cell(instr, start)
        for loc in instr.locations():
            if isinstance(loc, str) and ir.NAME_RE.fullmatch(loc) and not ir.REGISTER_RE.fullmatch(loc):
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
                self.add_location(tok, ir.Location(tok.text))

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
                if isinstance(cell.instr, ir.Label):
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
            self._separator("]", "in the locations clause")
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
        self.condition = ir.Condition(quantifier, self.parse_disjunction(0))

    def parse_disjunction(self, depth: int) -> ir.Expr:
        return self._joined(depth, "\\/", self.parse_conjunction, ir.Or)

    def parse_conjunction(self, depth: int) -> ir.Expr:
        return self._joined(depth, "/\\", self.parse_unary, ir.And)

    def _joined(self, depth: int, op: str, part: Callable[[int], ir.Expr], make: Callable[[tuple[ir.Expr, ...]], ir.Expr]) -> ir.Expr:
        """``part (op part)*``: the one part, or ``make`` of all of them."""
        args = [part(depth)]
        while self.at(op):
            self.next()
            args.append(part(depth))
        return args[0] if len(args) == 1 else make(tuple(args))

    def parse_unary(self, depth: int) -> ir.Expr:
        tok = self.peek()
        if depth > MAX_NESTING:
            raise self.error(f"condition nested more than {MAX_NESTING} deep", tok)
        if self.at("~") or (self.at_word("not") and self.is_keyword_here()):
            self.next()
            return ir.Not(self.parse_unary(depth + 1))
        if self.at("("):
            self.next()
            expr = self.parse_group(depth + 1)
            self.expect(")", " to close '('")
            return expr
        if tok.kind == WORD and tok.text in ("true", "false") and self.is_keyword_here():
            self.next()
            return ir.BoolConst(tok.text == "true")
        self._comparisons += 1
        if self._comparisons > ir.MAX_CONDITION_TERMS:
            raise self.error(f"more than {ir.MAX_CONDITION_TERMS} comparisons in the condition (the limit of a litmus test)", tok)
        lhs = self.parse_term()
        op = self.next()
        if op.kind != PUNCT or op.text not in CMP_PUNCT:
            raise self.error(f"expected a comparison (==, !=, <, <=, >, >=), found {op.describe()}", op)
        return ir.Cmp(CMP_PUNCT[op.text], lhs, self.parse_term())

    def parse_group(self, depth: int) -> ir.Expr:
        """Inside parentheses.  A leading ``/\\`` or ``\\/`` makes an explicit n-ary group, which may
        have zero or one member: ``(/\\)`` is ``And(())``, ``(\\/ a)`` is ``Or((a,))``."""
        for op, cls in (("/\\", ir.And), ("\\/", ir.Or)):
            if self.at(op):
                self.next()
                args: list[ir.Expr] = []
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
        return not (tok.kind == PUNCT and (tok.text in CMP_PUNCT or tok.text == ":"))

    def parse_term(self, allow_int: bool = True) -> ir.Term:
        tok = self.peek()
        if tok.kind == NUM and not self.at(":", 1):
            if not allow_int:
                raise self.error(f"expected a location or register, found {tok.describe()}", tok)
            self.next()
            return self.int_value(tok)
        if self.at_thread_register(tok):
            thread, reg = self.parse_thread_register()
            if thread.text not in self.thread_names:
                raise self.error(f"unknown thread {thread.text!r}", thread)
            if self.condition_token is not None:
                self.condition_registers.append((thread, reg))
            return ir.RegRef(thread.text, reg.text)
        if tok.kind == WORD and ir.NAME_RE.fullmatch(tok.text):
            self.next()
            if ir.REGISTER_RE.fullmatch(tok.text):
                raise self.error(f"register {tok.text!r} needs a thread, as in P0:{tok.text}", tok)
            if tok.text not in self.locations:
                raise self.error(f"undeclared location {tok.text!r}", tok)
            return ir.LocRef(tok.text)
        raise self.error(f"expected a register, location or number, found {tok.describe()}", tok)

    # -- building the Program --------------------------------------------------------------

    def build(self) -> ir.Program:
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
            ir.Thread(h.name, h.placement, tuple(c.instr for c in cells), tuple(sorted(init.items())))
            for h, cells, init in zip(self.headers, self.cells, inits)
        )
        program = ir.Program(
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
            program = semantics.checked(program)  # ir.validate, then the fences of the semantics table
        except ir.ProgramError as e:
            raise self.error(str(e), self.token_for(str(e))) from None
        for w in unwritten_condition_registers(program, self.condition_registers, self.path):
            warnings.warn(w)
        return program

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



def unwritten_condition_registers(program: ir.Program, named: Iterable[tuple[Token, Token]], path: str) -> list[SourceWarning]:
    """A warning for each register the condition names (``named``: its thread's and its token, in
    text order) that no instruction of its thread writes and the init block does not initialise: the
    condition reads it as 0 whatever the program does -- likely a typo (``P1:r9`` for ``P1:r1``).
    Not an error, and a register some instruction writes is not warned of even when only some paths
    reach it (legal: Dat3M's suite has such tests).  Each register once, at its first mention."""
    written = {t.name: t.registers_set() for t in program.threads}
    out: list[SourceWarning] = []
    seen: set[tuple[str, str]] = set()
    for thread, reg in named:
        key = (thread.text, reg.text)
        if key in seen or reg.text in written[thread.text]:
            continue
        seen.add(key)
        out.append(SourceWarning(f"register {thread.text}:{reg.text} in the condition is never written by thread {thread.text} "
                                 "(nor initialised): it reads as 0 in every outcome", path, thread.line, thread.col))
    return out


def _replace(loc: ir.Location, **changes: object) -> ir.Location:
    return dataclasses.replace(loc, **changes)  # type: ignore[arg-type]



def parse(text: str, path: str = "<input>") -> ir.Program:
    """Parse litmus text; raise :class:`SourceError` (``path:line:col: message``) if it is malformed."""
    return _Parser(text, path).parse()


def parse_file(path: str | Path) -> ir.Program:
    """Parse a ``.litmus`` file: a regular file (a FIFO or a device is refused without blocking;
    a symbolic link named on purpose is followed) of at most :data:`MAX_LITMUS_BYTES` bytes."""
    from ..files import UnreadableFile, read_regular

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


