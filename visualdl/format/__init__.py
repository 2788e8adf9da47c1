"""The record format, shared by the writer and every reader of it.

``record.proto`` (the source of truth) and its generated ``record_pb2``; ``framing`` (how
records sit in a file: the TFRecord framing with CRC32C); ``scalar_codec`` (scalar series
encoded and decoded without protobuf on the hot paths); ``version`` (the format version in
every file header). Nothing here imports the writer, the reader or the server.
"""
