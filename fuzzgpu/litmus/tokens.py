"""Tokens of the litmus dialect: the tokenizer and the limits on what it reads."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator

from ..errors import SourceError

MAX_DIGITS = 20

WORD, NUM, STR, PUNCT, EOF = "word", "number", "string", "punct", "end"
_TWO_CHAR_PUNCT = frozenset({"/\\", "\\/", "==", "!=", "<=", ">="})
_ONE_CHAR_PUNCT = frozenset("{}()[];|,@:=<>~")
_WORD_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_DIGITS = frozenset("0123456789")
_WORD_CHARS = _WORD_START | _DIGITS
SPACE = frozenset(" \t\r\n\f\v")
# runs of characters, matched by the regex engine (a Python loop over a 10 MB word takes seconds)
SPACE_RUN = re.compile(r"[ \t\r\n\f\v]*")
_WORD_RUN = re.compile(r"[A-Za-z0-9_]*")
_DIGIT_RUN = re.compile(r"[0-9]*")
#: the largest .litmus file read, and the most tokens parsed (docs/reliability.md, "Limits"): the
#: largest program within the IR's limits (64 threads x 256 instructions, a condition of 65,536
#: comparisons) has about 400,000 tokens; a file with more is refused when the parser reaches them
MAX_LITMUS_BYTES = 16 << 20
MAX_TOKENS = 1 << 19
NOT_SPACE_RUN = re.compile(r"[^ \t\r\n\f\v]*")
BLANK_RUN = re.compile(r"[ \t]*")


def run_end(run: re.Pattern[str], text: str, pos: int = 0) -> int:
    """Where the run of ``run`` (one of the ``*_RUN`` patterns: a starred character class, which
    matches everywhere, empty at worst) starting at ``pos`` ends."""
    m = run.match(text, pos)
    return m.end() if m is not None else pos


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


class Tokenizer:
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
        end = run_end(SPACE_RUN, self.text, self.pos)
        newlines = self.text.count("\n", self.pos, end)
        if newlines:
            self.line += newlines
            self.line_start = self.text.rindex("\n", self.pos, end) + 1
        self.pos = end

    def _token(self, kind: str, start: int) -> Token:
        return Token(kind, self.text[start : self.pos], self.line, start - self.line_start + 1)

    def _run(self, chars: frozenset[str]) -> None:
        run = _WORD_RUN if chars is _WORD_CHARS else _DIGIT_RUN
        self.pos = run_end(run, self.text, self.pos)

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
