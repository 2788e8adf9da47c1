"""TensorBoard event files (``events.out.tfevents.*``), read with our own schema and code.

No TensorFlow or ``tensorboard`` package is needed: ``event.proto`` declares the messages
TensorBoard writes, with its public field numbers, and ``decode`` turns each ``Event`` into
the entries our own records give the reader.
"""

#: The part of a file name that marks a TensorBoard event file.
TFEVENTS_MARK = "events.out.tfevents"


def is_tfevents_file(name: str) -> bool:
    """True for a TensorBoard event file's base name (hidden files excluded)."""
    return TFEVENTS_MARK in name and not name.startswith(".")
