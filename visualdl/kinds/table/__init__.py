"""Tables: named columns of numbers, text, images and audio per step; one record each,
indexed by file offset and read on demand."""

from visualdl.kinds.spec import Kind

KIND = Kind("table", __name__, message="table", blob=True, views=("tables",))
