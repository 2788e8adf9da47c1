"""Train an MLP and a small CNN on scikit-learn's bundled 8x8 digits (no download) with
visualdl.framework, printing progress; both reach >= 97% test accuracy in seconds.

    python examples/train_digits.py --epochs 30 --model both [--logdir runs/digits]

With ``--logdir`` every metric also goes through ``visualdl.LogWriter`` (one run per model);
``examples/train_demo.py`` shows the same training through ``vf.Model.fit`` instead.

Needs scikit-learn (an optional extra: ``pip install scikit-learn``).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

import numpy as np

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import nn


def load_digits_split(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test): images (N, 1, 8, 8) scaled to [0, 1], stratified."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), bool)
    for cls in range(10):
        idx = rng.permutation(np.flatnonzero(y == cls))
        test[idx[: int(round(len(idx) * test_fraction))]] = True
    return x[~test], y[~test], x[test], y[test]


def make_mlp() -> nn.Layer:
    return nn.Sequential(
        nn.Flatten(),
        nn.Linear(64, 256), nn.BatchNorm1D(256), nn.ReLU(), nn.Dropout(0.3),
        nn.Linear(256, 10),
    )


def make_cnn() -> nn.Layer:
    return nn.Sequential(
        nn.Conv2D(1, 16, 3, padding=1), nn.BatchNorm2D(16), nn.ReLU(), nn.MaxPool2D(2),   # 16x4x4
        nn.Conv2D(16, 32, 3, padding=1), nn.BatchNorm2D(32), nn.ReLU(), nn.MaxPool2D(2),  # 32x2x2
        nn.Flatten(),
        nn.Linear(128, 64), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(64, 10),
    )


@vf.no_grad()
def evaluate(net: nn.Layer, loader: vf.data.DataLoader) -> tuple[float, float]:
    """(mean loss, accuracy) over a loader."""
    net.eval()
    total, correct, loss_sum = 0, 0, 0.0
    for x, y in loader:
        logits = net(x)
        loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
        correct += int((logits.argmax(axis=1) == y).sum().item())
        total += y.shape[0]
    net.train()
    return loss_sum / total, correct / total


def train(name: str, net: nn.Layer, data, epochs: int, lr: float, batch_size: int = 64,
          log: Callable[[str, float, int], None] | None = None) -> float:
    """Train with AdamW + cosine schedule after a short warmup; returns test accuracy.

    ``log(tag, value, step)`` receives every metric; issue 6 plugs a LogWriter in here
    (e.g. ``log = lambda tag, v, step: writer.add_scalar(tag, v, step)``).
    """
    x_train, y_train, x_test, y_test = data
    train_loader = vf.data.DataLoader(vf.data.TensorDataset(x_train, y_train), batch_size,
                                      shuffle=True, seed=0)
    test_loader = vf.data.DataLoader(vf.data.TensorDataset(x_test, y_test), 256)
    steps = epochs * len(train_loader)
    warmup = max(1, steps // 20)
    sched = vf.optim.LinearWarmup(vf.optim.CosineAnnealingLR(lr, steps - warmup), warmup, 0.0, lr)
    opt = vf.optim.AdamW(net.parameters(), sched, weight_decay=1e-4,
                         grad_clip=vf.optim.ClipGradByGlobalNorm(5.0))
    n_params = sum(p.numel() for p in net.parameters())
    print(f"[{name}] {n_params} parameters, {epochs} epochs x {len(train_loader)} steps")
    step, start = 0, time.perf_counter()
    for epoch in range(1, epochs + 1):
        loss_sum, seen = 0.0, 0
        for x, y in train_loader:
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            loss_sum += loss.item() * y.shape[0]
            seen += y.shape[0]
            if log is not None:
                log(f"{name}/train/loss", loss.item(), step)
                log(f"{name}/train/lr", opt.get_lr(), step)
        test_loss, test_acc = evaluate(net, test_loader)
        if log is not None:
            log(f"{name}/eval/loss", test_loss, step)
            log(f"{name}/eval/acc", test_acc, step)
        if epoch == 1 or epoch == epochs or epoch % max(1, epochs // 10) == 0:
            print(f"[{name}] epoch {epoch:3d}  train loss {loss_sum / seen:.4f}  test loss "
                  f"{test_loss:.4f}  test acc {test_acc:.4f}  ({time.perf_counter() - start:.1f}s)")
    return evaluate(net, test_loader)[1]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--model", choices=["mlp", "cnn", "both"], default="both")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--logdir", default=None, help="also log scalars here (LogWriter)")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for BLAS and Numba (default: environment)")
    args = parser.parse_args(argv)
    if args.threads:
        vf.set_num_threads(args.threads)
    data = load_digits_split(args.seed)
    print(f"digits: {len(data[1])} train / {len(data[3])} test images")
    results = {}
    for name, factory in (("mlp", make_mlp), ("cnn", make_cnn)):
        if args.model in (name, "both"):
            vf.seed(args.seed)  # each model's init and dropout independent of the other's
            writer = None
            if args.logdir:
                from visualdl import LogWriter

                writer = LogWriter(logdir=f"{args.logdir}/{name}")
            log = writer.add_scalar if writer is not None else None
            results[name] = train(name, factory(), data, args.epochs, args.lr, log=log)
            if writer is not None:
                writer.close()
            print(f"[{name}] final test accuracy {results[name]:.4f}")
    return results


if __name__ == "__main__":
    main()
