"""Text: Markdown per step, rendered and sanitized on the server."""

from visualdl.kinds.spec import Kind

KIND = Kind("text", __name__, message="text", views=("text",))
