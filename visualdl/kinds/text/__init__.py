"""Text: Markdown per step, rendered and sanitized on the server."""

from visualdl.kinds.spec import Kind

KIND = Kind(
    name="text",
    message="text",
    write="visualdl.kinds.text.write",
    read="visualdl.kinds.text.read",
    api="visualdl.kinds.text.api",
    views=("text",),
)
