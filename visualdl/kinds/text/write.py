"""Text, writer side: Markdown strings."""

from __future__ import annotations

from typing import Any

from visualdl.kinds.checks import check_text_size, check_utf8


def check(tag: str, text_string: Any) -> tuple[str, int]:
    """The payload ``encode`` takes, and its size."""
    if not isinstance(text_string, str):
        raise TypeError(f"{tag!r}: text_string must be a str, got {type(text_string).__name__}")
    check_utf8(tag, "text_string", text_string)
    check_text_size(tag, "text_string", text_string)
    return text_string, len(text_string)


def encode(msg: Any, payload: str) -> None:
    msg.text = payload
