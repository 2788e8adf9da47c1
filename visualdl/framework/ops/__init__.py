"""Op definitions: each op is one registered ``Op`` class (forward + backward written once
against the backend interface) and a thin public function that calls ``dispatch.apply``."""

from . import activation, conv, dropout, elementwise, embedding, linalg, loss, norm, reduction, shape  # noqa: F401
