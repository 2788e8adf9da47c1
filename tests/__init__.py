"""The test suites. A package, so that ``tests.helpers`` is importable from every folder."""
