"""Op definitions: each op is one registered ``Op`` class (forward + backward written once
against the backend interface) and a thin public function that calls ``dispatch.apply``."""

from . import activation, conv, elementwise, linalg, loss, norm, reduction, shape, sparse_ops  # noqa: F401
