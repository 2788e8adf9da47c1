"""Train a small two-layer network in plain numpy on generated data, logging every kind
of record visualdl knows. It writes three runs (three learning rates) under --logdir.

    python examples/demo_logs.py --logdir demo_logs
    visualdl --logdir demo_logs
"""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

from visualdl import LogWriter


def make_spirals(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals: a task a linear model cannot solve, a small MLP can."""
    t = rng.uniform(0.25, 1.0, n) * 3 * math.pi
    label = rng.integers(0, 2, n)
    angle = t + label * math.pi
    x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) / (3 * math.pi)
    return (x + rng.normal(0, 0.02, x.shape)).astype(np.float32), label


class MLP:
    def __init__(self, hidden: int, rng: np.random.Generator) -> None:
        self.params = {
            "fc1.weight": rng.normal(0, 1.0, (2, hidden)).astype(np.float32),
            "fc1.bias": np.zeros(hidden, np.float32),
            "fc2.weight": rng.normal(0, 1 / math.sqrt(hidden), (hidden, 1)).astype(np.float32),
            "fc2.bias": np.zeros(1, np.float32),
        }

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.params
        h = np.tanh(x @ p["fc1.weight"] + p["fc1.bias"])
        logit = (h @ p["fc2.weight"] + p["fc2.bias"])[:, 0]
        return h, 1 / (1 + np.exp(-logit))

    def step(self, x: np.ndarray, y: np.ndarray, lr: float) -> tuple[float, dict]:
        p = self.params
        h, prob = self.forward(x)
        eps = 1e-7
        loss = float(-np.mean(y * np.log(prob + eps) + (1 - y) * np.log(1 - prob + eps)))
        d_logit = ((prob - y) / len(y))[:, None].astype(np.float32)
        grads = {"fc2.weight": h.T @ d_logit, "fc2.bias": d_logit.sum(0)}
        d_h = (d_logit @ p["fc2.weight"].T) * (1 - h**2)
        grads["fc1.weight"] = x.T @ d_h
        grads["fc1.bias"] = d_h.sum(0)
        for name, g in grads.items():
            p[name] -= lr * g
        return loss, grads


def decision_image(model: MLP, x: np.ndarray, y: np.ndarray, size: int = 96) -> np.ndarray:
    """The model's probability over the plane as an RGB image, with the data on top."""
    grid = np.linspace(-1.1, 1.1, size, dtype=np.float32)
    xx, yy = np.meshgrid(grid, -grid)
    _, prob = model.forward(np.stack([xx.ravel(), yy.ravel()], 1))
    prob = prob.reshape(size, size)
    img = np.stack([prob, 0.25 + 0 * prob, 1 - prob], axis=2)
    cols = np.clip(((x[:, 0] + 1.1) / 2.2 * (size - 1)).astype(int), 0, size - 1)
    rows = np.clip(((1.1 - x[:, 1]) / 2.2 * (size - 1)).astype(int), 0, size - 1)
    img[rows, cols] = np.where(y[:, None] == 1, [1.0, 1.0, 0.2], [0.1, 0.1, 0.1])
    return img.astype(np.float32)


def tone(freq: float, seconds: float = 0.5, rate: int = 8000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.4 * np.sin(2 * math.pi * freq * t) * np.exp(-3 * t)).astype(np.float32)


def tiny_onnx_model(model: MLP):
    """The network as an ONNX graph (when the optional onnx package is installed)."""
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["h0"], name="fc1/matmul"),
        helper.make_node("Add", ["h0", "fc1.bias"], ["h1"], name="fc1/add"),
        helper.make_node("Tanh", ["h1"], ["h"], name="act/tanh"),
        helper.make_node("MatMul", ["h", "fc2.weight"], ["o0"], name="fc2/matmul"),
        helper.make_node("Add", ["o0", "fc2.bias"], ["logit"], name="fc2/add"),
        helper.make_node("Sigmoid", ["logit"], ["prob"], name="head/sigmoid"),
    ]
    graph = helper.make_graph(
        nodes, "spiral_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 2])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1])],
        [numpy_helper.from_array(value, name) for name, value in model.params.items()],
    )
    return helper.make_model(graph, producer_name="visualdl-demo")


def train_run(logdir: str, lr: float, epochs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    x_train, y_train = make_spirals(2000, rng)
    x_test, y_test = make_spirals(500, rng)
    model = MLP(hidden=32, rng=rng)
    batch, step = 64, 0
    with LogWriter(logdir=logdir) as writer:
        writer.add_text("about", f"# Spiral MLP\n\nlearning rate **{lr}**, {epochs} epochs, "
                        "hidden width 32.\n\n| split | points |\n|---|---|\n"
                        f"| train | {len(x_train)} |\n| test | {len(x_test)} |", step=0)
        graph = tiny_onnx_model(model)
        if graph is not None:
            writer.add_graph(graph)
        for epoch in range(epochs):
            order = rng.permutation(len(x_train))
            for start in range(0, len(order), batch):
                idx = order[start:start + batch]
                loss, grads = model.step(x_train[idx], y_train[idx], lr)
                writer.add_scalar("train/loss", loss, step)
                writer.add_scalar("train/lr", lr, step)
                if step % 20 == 0:
                    for name, g in grads.items():
                        writer.add_histogram(f"grad/{name}", g, step)
                step += 1
            h, prob = model.forward(x_test)
            acc = float(np.mean((prob > 0.5) == y_test))
            writer.add_scalar("eval/accuracy", acc, epoch)
            writer.add_scalars("eval/loss_parts", {"pos": float(-np.log(prob[y_test == 1] + 1e-7).mean()),
                                                   "neg": float(-np.log(1 - prob[y_test == 0] + 1e-7).mean())},
                               epoch)
            for name, value in model.params.items():
                writer.add_histogram(f"weights/{name}", value, epoch)
            writer.add_pr_curve("eval/pr", y_test, prob, epoch)
            writer.add_roc_curve("eval/roc", y_test, prob, epoch)
            writer.add_image("decision/boundary", decision_image(model, x_test, y_test), epoch)
            writer.add_audio("sound/accuracy_tone", tone(220 + 660 * acc), epoch)
            writer.add_figure("decision/probability_hist", {
                "data": [{"type": "histogram", "x": prob[y_test == k].round(4).tolist(),
                          "name": f"class {k}", "opacity": 0.6} for k in (0, 1)],
                "layout": {"barmode": "overlay", "title": f"test probabilities, epoch {epoch}"},
            }, epoch)
            writer.add_text("log", f"epoch {epoch}: test accuracy **{acc:.3f}**", epoch)
        h, prob = model.forward(x_test[:300])
        writer.add_embeddings("hidden", h, metadata=[[str(int(y)), f"{p:.2f}"] for y, p in
                                                     zip(y_test[:300], prob)],
                              metadata_header=["label", "probability"], step=epochs)
        writer.add_hparams({"lr": lr, "hidden": 32, "batch_size": batch, "epochs": epochs,
                            "optimizer": "sgd"}, ["eval/accuracy", "train/loss"])
    return acc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logdir", default="demo_logs")
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args()
    for i, lr in enumerate((0.3, 1.0, 3.0)):
        run = os.path.join(args.logdir, f"lr_{lr}")
        acc = train_run(run, lr, args.epochs, seed=i)
        print(f"{run}: test accuracy {acc:.3f}")
    print(f"wrote {args.logdir}; inspect it with: visualdl inspect {args.logdir}")


if __name__ == "__main__":
    main()
