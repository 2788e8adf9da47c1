"""The visualdl demo: train a small CNN on scikit-learn's bundled 8x8 digits with
``vf.Model.fit`` and the ``VisualDL`` callback, then a short hyper-parameter sweep, all into
one logdir -- curves, histograms, sample images, activation statistics, the model graph, a
profile of train steps 5-9 and an hparams table to explore with ``visualdl --logdir demo_logs``.

    python examples/train_demo.py --logdir demo_logs && visualdl --logdir demo_logs

No download (the digits ship with scikit-learn); a few seconds of training on 2 cores with a
warm Numba cache. The first run on a machine also compiles the framework's kernels (about
5 s on 2 cores; cached on disk for the next runs). Runs written: ``cnn`` (the main run) and
``sweep/<name>`` (3 short runs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import textwrap
import time

# A sibling script: Python puts this file's folder first on sys.path when it is run.
from train_digits import load_digits_split, make_mlp

import visualdl.framework as vf
from visualdl.framework import nn


def make_cnn() -> nn.Layer:
    """train_digits' CNN with named parts, so that parameter tags read
    ``features.block1.conv.weight`` and the graph view folds ``features/block1/...``."""

    def block(c_in: int, c_out: int) -> nn.Layer:
        return nn.Sequential(("conv", nn.Conv2D(c_in, c_out, 3, padding=1)),
                             ("bn", nn.BatchNorm2D(c_out)), ("relu", nn.ReLU()),
                             ("pool", nn.MaxPool2D(2)))

    return nn.Sequential(
        ("features", nn.Sequential(("block1", block(1, 16)), ("block2", block(16, 32)))),
        ("classifier", nn.Sequential(("flatten", nn.Flatten()), ("fc1", nn.Linear(128, 64)),
                                     ("relu", nn.ReLU()), ("dropout", nn.Dropout(0.2)),
                                     ("fc2", nn.Linear(64, 10)))),
    )


# (run name, model factory, optimizer, peak learning rate, batch size, epochs)
SWEEP = [
    ("sweep/cnn_adamw_lr3e-4", make_cnn, "AdamW", 3e-4, 64, 15),
    ("sweep/cnn_sgd_lr5e-2", make_cnn, "SGD", 5e-2, 32, 15),
    ("sweep/mlp_adamw_lr3e-3", make_mlp, "AdamW", 3e-3, 64, 15),
]


def make_optimizer(kind: str, net: vf.nn.Layer, lr: float, total_steps: int) -> vf.optim.Optimizer:
    """Linear warmup then cosine decay (stepped per batch by fit's LRScheduler callback)."""
    warmup = max(1, total_steps // 20)
    sched = vf.optim.LinearWarmup(vf.optim.CosineAnnealingLR(lr, total_steps - warmup),
                                  warmup, 0.0, lr)
    if kind == "SGD":
        return vf.optim.SGD(net.parameters(), sched, momentum=0.9, weight_decay=1e-4)
    return vf.optim.AdamW(net.parameters(), sched, weight_decay=1e-4)


def train_run(logdir: str, name: str, factory, opt_kind: str, lr: float, batch_size: int,
              epochs: int, data, seed: int, verbose: int, activations: list[str] | None = None,
              profile_steps: tuple[int, int] | None = None) -> dict:
    x_train, y_train, x_test, y_test = data
    vf.seed(seed)
    net = factory()
    train_set = vf.data.TensorDataset(x_train, y_train)
    steps = epochs * -(-len(train_set) // batch_size)
    model = vf.Model(net)
    model.prepare(make_optimizer(opt_kind, net, lr, steps), vf.nn.CrossEntropyLoss(),
                  vf.metric.Accuracy(topk=(1, 3)))
    run_dir = os.path.join(logdir, name)
    if os.path.isdir(run_dir):
        shutil.rmtree(run_dir)  # a re-run replaces this demo's own run, nothing else
    callback = vf.callbacks.VisualDL(run_dir, histogram_freq=10,
                                     hparams={"model": factory.__name__.replace("make_", "")},
                                     activation_layers=activations,
                                     profile_steps=profile_steps,
                                     # a demo run lasts seconds, not the default's 10 s:
                                     # sample each second so that the System tab has curves
                                     system_metrics=1)
    start = time.perf_counter()
    result = model.fit(train_set, vf.data.TensorDataset(x_test, y_test), batch_size=batch_size,
                       epochs=epochs, verbose=verbose, callbacks=[callback])
    print(f"[{name}] test acc {result['acc_top1']:.4f}  top-3 {result['acc_top3']:.4f}  "
          f"loss {result['loss']:.4f}  ({time.perf_counter() - start:.1f}s)", flush=True)
    return result


def _help_texts() -> tuple[str, str]:
    """--help's description and epilog: this module's docstring, whole paragraphs (its first
    line alone stops mid-sentence), without the reST backticks."""
    def wrap(text: str) -> str:  # the command line stays one line
        return text if text.startswith("python ") else textwrap.fill(text, 79)

    paragraphs = [" ".join(p.split()) for p in __doc__.replace("``", "").split("\n\n")]
    return wrap(paragraphs[0]), "\n\n".join(wrap(p) for p in paragraphs[1:] if p)


def main(argv: list[str] | None = None) -> dict[str, dict]:
    description, epilog = _help_texts()
    parser = argparse.ArgumentParser(description=description, epilog=epilog,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--logdir", default="demo_logs",
                        help="where the runs are written (default %(default)s)")
    parser.add_argument("--epochs", type=int, default=30,
                        help="epochs of the main run (default %(default)s)")
    parser.add_argument("--no-sweep", action="store_true", help="only the main run")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the data split and the weights (default %(default)s)")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for BLAS and Numba (default 1: these models are too small "
                             "to gain from more, and one thread never fights other processes)")
    parser.add_argument("--verbose", type=int, default=1, choices=[0, 1, 2],
                        help="1: progress bars, 2: a line per epoch, 0: only results")
    args = parser.parse_args(argv)
    if args.threads:
        vf.set_num_threads(args.threads)
    start = time.perf_counter()
    data = load_digits_split(args.seed)
    print(f"digits: {len(data[1])} train / {len(data[3])} test images -> {args.logdir}")
    results = {"cnn": train_run(args.logdir, "cnn", make_cnn, "AdamW", 3e-3, 64, args.epochs,
                                data, args.seed, args.verbose,
                                activations=["features.block1.relu", "features.block2.relu",
                                             "classifier.relu"],
                                profile_steps=(5, 10))}
    if not args.no_sweep:
        for name, factory, opt_kind, lr, batch_size, epochs in SWEEP:
            results[name] = train_run(args.logdir, name, factory, opt_kind, lr, batch_size,
                                      epochs, data, args.seed, 2 if args.verbose else 0)
    print(f"done in {time.perf_counter() - start:.1f}s; now run: visualdl --logdir {args.logdir}")
    return results


if __name__ == "__main__":
    main()
