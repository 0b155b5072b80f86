"""Pygments highlighting for QTextDocuments, one block (line) at a time.

git-cola's habit: one ``QTextCharFormat`` per token type, built once from the style (which already
resolves inheritance from the parent token). For regex lexers (Python, Handlebars) the lexer's state
stack at the end of each line is stored on the block, so a line is re-lexed from the state its
predecessor left: typing re-highlights one line, and the next ones only when a state changes (an
opened triple-quoted string). That keeps a 64 KiB file responsive.
"""

from __future__ import annotations

from pygments.lexer import Lexer, RegexLexer
from pygments.lexers import HandlebarsLexer, PythonLexer, YamlLexer
from pygments.styles import get_style_by_name
from pygments.token import Error, Text, Whitespace, _TokenType

from ..qt import QtGui

STYLES = {"light": "default", "dark": "github-dark"}

_LEXERS: dict[str, type[Lexer]] = {
    "python": PythonLexer,
    "handlebars": HandlebarsLexer,
    "yaml": YamlLexer,
}


def _lex(lexer: RegexLexer, text: str,
         stack: tuple[str, ...]) -> tuple[list[tuple[int, _TokenType, str]], tuple[str, ...]]:
    """``RegexLexer.get_tokens_unprocessed`` that also reports the final state stack."""
    pos = 0
    tokendefs = lexer._tokens
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    tokens: list[tuple[int, _TokenType, str]] = []
    while True:
        for rexmatch, action, new_state in statetokens:
            m = rexmatch(text, pos)
            if not m:
                continue
            if action is not None:
                if type(action) is _TokenType:
                    tokens.append((pos, action, m.group()))
                else:
                    tokens.extend(action(lexer, m))
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for state in new_state:
                        if state == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif state == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(state)
                elif isinstance(new_state, int):
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                statetokens = tokendefs[statestack[-1]]
            break
        else:
            if pos >= len(text):
                break
            if text[pos] == "\n":
                statestack = ["root"]
                statetokens = tokendefs["root"]
                tokens.append((pos, Whitespace, "\n"))
            else:
                tokens.append((pos, Error, text[pos]))
            pos += 1
    return tokens, tuple(statestack)


class PygmentsHighlighter(QtGui.QSyntaxHighlighter):
    def __init__(self, document: QtGui.QTextDocument, language: str = "python", theme: str = "light") -> None:
        super().__init__(document)
        self._lexer = _LEXERS[language](stripnl=False, ensurenl=False)
        self._incremental = type(self._lexer).get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed
        self._formats: dict[_TokenType, QtGui.QTextCharFormat | None] = {}
        self._style = get_style_by_name(STYLES.get(theme, "default"))
        # A block's end-of-line lexer stack is kept as its int block state (an index into _stacks):
        # no Python object per line for Qt to own, and Qt compares states to know where to stop.
        self._states: dict[tuple[str, ...], int] = {("root",): 0}
        self._stacks: list[tuple[str, ...]] = [("root",)]

    def set_theme(self, theme: str) -> None:
        self._style = get_style_by_name(STYLES.get(theme, "default"))
        self._formats.clear()
        self.rehighlight()

    def _format(self, token: _TokenType) -> QtGui.QTextCharFormat | None:
        if token in self._formats:
            return self._formats[token]
        fmt: QtGui.QTextCharFormat | None = None
        if token not in (Text, Whitespace):
            known = token
            while not self._style.styles_token(known) and known.parent is not None:
                known = known.parent  # lexer-specific subtypes inherit their parent's look
            spec = self._style.style_for_token(known)
            fmt = QtGui.QTextCharFormat()
            if spec["color"]:
                fmt.setForeground(QtGui.QColor(f"#{spec['color']}"))
            if spec["bold"]:
                fmt.setFontWeight(QtGui.QFont.Weight.Bold)
            if spec["italic"]:
                fmt.setFontItalic(True)
            if spec["underline"]:
                fmt.setFontUnderline(True)
            if token is Error or token.parent is Error:
                fmt = None  # a half-typed line is not an error worth a red box
        self._formats[token] = fmt
        return fmt

    def _state_id(self, stack: tuple[str, ...]) -> int:
        state = self._states.get(stack)
        if state is None:
            state = self._states[stack] = len(self._stacks)
            self._stacks.append(stack)
        return state

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt override
        if self._incremental:
            previous = self.previousBlockState()
            stack = self._stacks[previous] if 0 <= previous < len(self._stacks) else ("root",)
            tokens, end_stack = _lex(self._lexer, text + "\n", stack)
            self.setCurrentBlockState(self._state_id(end_stack))
        else:
            tokens = list(self._lexer.get_tokens_unprocessed(text))
        for index, token, value in tokens:
            if index >= len(text):
                break
            fmt = self._format(token)
            if fmt is not None:
                self.setFormat(index, len(value), fmt)
