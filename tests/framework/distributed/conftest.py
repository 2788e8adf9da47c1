"""``backend``: each spawned job's test runs once per collective library.

gloo needs PyTorch (marked ``torch``: .ci/run's second stage); MPI needs mpi4py and MPICH's
launcher (``visualdl[test]`` and ``visualdl[distributed]`` install both), not torch."""

from __future__ import annotations

import pytest

from visualdl.framework.distributed.mpi_launch import launcher

MPI_MISSING = "mpi4py and MPICH are not installed (pip install 'visualdl[distributed]')"


@pytest.fixture(params=[pytest.param("gloo", marks=pytest.mark.torch),
                        pytest.param("mpi", marks=pytest.mark.skipif(
                            launcher() is None, reason=MPI_MISSING))])
def backend(request: pytest.FixtureRequest) -> str:
    if request.param == "gloo":
        pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch; "
                                            ".ci/run installs the CPU wheel)")
    return request.param
