"""Regular expressions that come from a request, compiled so that no request can stall the
server: matched by RE2 (google-re2), whose time is linear in the text, never by the
backtracking ``re`` engine, where a pattern such as ``(.*)*X`` doubles its time with each
character of a run name while it holds the interpreter lock.

A pattern is bounded in length, RE2 bounds the memory of its compiled program (a huge
repeat count or deep nesting is refused, not expanded), and every refusal is a
``PatternError`` (a ``ValueError``) whose message starts with the name the caller gave,
so a route answers 400 naming its argument. RE2 reads Python's common syntax (classes,
``(?P<name>...)``, ``(?i)``, lazy repeats); what it cannot run in linear time
(backreferences, lookarounds) is refused with that reason. ``\\d``, ``\\w`` and ``\\b``
are ASCII in RE2.
"""

from __future__ import annotations

import re

import re2

__all__ = ["MAX_LENGTH", "PatternError", "compile_pattern"]

#: The longest pattern taken from a request, in characters.
MAX_LENGTH = 1000
#: RE2's largest repeat count; a larger one it would read as literal text, not refuse.
MAX_REPEAT = 1000
_REPEAT = re.compile(r"(\\*)\{(\d+)(?:,(\d*))?\}")
#: RE2's memory budget for one compiled pattern (its default is 8 MiB): a pattern whose
#: program needs more is refused.
_MAX_MEM = 8 << 20

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # refusals are reported to the caller, not written to stderr
_OPTIONS.max_mem = _MAX_MEM

# RE2's words for the constructs that need backtracking, and what they are.
_BACKTRACKING = (
    ("invalid escape sequence: \\k", "a backreference"),
    ("invalid perl operator: (?P", "a backreference"),
    ("invalid perl operator: (?=", "a lookahead"),
    ("invalid perl operator: (?!", "a lookahead"),
    ("invalid perl operator: (?<", "a lookbehind"),
)


class PatternError(ValueError):
    """A pattern that was refused; the message names it and says why."""


def compile_pattern(text: object, name: str = "pattern") -> "re2._Regexp":
    """``text`` compiled by RE2, or ``PatternError`` (``"<name> ..."``) when it is not a
    string, is longer than ``MAX_LENGTH``, is not valid, or needs backtracking."""
    if not isinstance(text, str):
        raise PatternError(f"{name} must be a string")
    if len(text) > MAX_LENGTH:
        raise PatternError(f"{name} is longer than {MAX_LENGTH} characters ({len(text)})")
    huge = _huge_repeat(text)
    if huge:
        raise PatternError(f"{name} is refused: its repeat count {huge} is over {MAX_REPEAT}")
    try:
        return re2.compile(text, _OPTIONS)
    except re2.error as err:
        raise PatternError(f"{name} {_reason(err)}") from None


def _huge_repeat(text: str) -> str | None:
    """The first ``{m}``/``{m,n}`` with a count over ``MAX_REPEAT`` (not an escaped brace)."""
    for found in _REPEAT.finditer(text):
        escaped = len(found.group(1)) % 2 == 1
        counts = [c for c in found.group(2, 3) if c]
        if not escaped and any(len(c) > 4 or int(c) > MAX_REPEAT for c in counts):
            return found.group(0)[len(found.group(1)):]
    return None


def _reason(err: Exception) -> str:
    """What is wrong, in words, from RE2's message (the wrapper gives it as bytes)."""
    message = err.args[0] if err.args else ""
    if isinstance(message, bytes):
        message = message.decode("utf-8", "replace")
    message = str(message)
    what = next((w for prefix, w in _BACKTRACKING if message.startswith(prefix)), None)
    if what is None and message[:-1] == "invalid escape sequence: \\" and message[-1].isdigit():
        what = "a backreference"
    if what is not None:
        return f"is refused: it uses {what}, which the linear-time matcher (RE2) does not run ({message})"
    if "pattern too large" in message:
        return f"is refused: its compiled form is too large ({message})"
    return f"is not a valid regular expression: {message}"
