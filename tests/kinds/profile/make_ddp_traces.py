"""Make the DDP trace fixtures (tests/kinds/profile/data/ddp/): two processes, the gloo
backend, a small MLP wrapped in DistributedDataParallel, profiled by torch.profiler for
5 active steps, each rank's trace written by tensorboard_trace_handler as ``worker<rank>``.

Run with torch importable (it is no dependency of visualdl), e.g.::

    PYTHONPATH=/tmp/distview-torch python tests/kinds/profile/make_ddp_traces.py OUTDIR
"""

from __future__ import annotations

import socket
import sys

WORLD = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker(rank: int, port: int, out: str) -> None:
    import torch
    import torch.distributed as dist
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORLD)
    torch.manual_seed(0)
    model = DistributedDataParallel(nn.Sequential(nn.Linear(64, 128), nn.ReLU(),
                                                  nn.Linear(128, 10)))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(rank)
    batch = 32 * (rank + 1)  # rank 1 computes more: the slower rank
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=1, warmup=1, active=5),
                 on_trace_ready=tensorboard_trace_handler(out, worker_name=f"worker{rank}"),
                 record_shapes=True) as prof:
        for _ in range(8):
            x = torch.randn(batch, 64, generator=gen)
            y = torch.randint(0, 10, (batch,), generator=gen)
            opt.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            opt.step()
            prof.step()
    dist.barrier()  # both ranks done with every collective before the group goes
    dist.destroy_process_group()


def main(out: str) -> None:
    import torch.multiprocessing as mp
    mp.spawn(_worker, args=(_free_port(), out), nprocs=WORLD, join=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ddp_traces")
