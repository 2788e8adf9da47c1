"""What the test folders share, imported by tests and by the fixtures of their conftests:

* ``tests.helpers.http``: ``Client`` (requests against one server) and ``wait_for`` (polling);
* ``tests.helpers.server``: ``serving()``, a real server on a free loopback port, loaded;
* ``tests.helpers.cli``: the ``visualdl`` command line as a real process (``start_cli``,
  ``run_cli``, ``CliProcess``);
* ``tests.helpers.logs``: the standard logdirs written by LogWriter and their constants;
* ``tests.helpers.onnx_models``: ONNX models built with onnx.helper.
"""
