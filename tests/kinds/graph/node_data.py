"""A small CNN trained through ``Model.fit`` with the ``VisualDL`` callback logging its graph,
activation statistics and a profile (``vf.profiler``) into one run: the data on the nodes
tests map all three onto the graph the callback exported."""

from __future__ import annotations

import numpy as np

LAYERS = ["features.0", "features.1", "features.3", "classifier"]


def tiny_cnn():
    """features: Conv2D -> ReLU -> MaxPool -> Conv2D -> ReLU; Flatten; classifier Linear."""
    from visualdl.framework import nn

    class Net(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(nn.Conv2D(1, 4, 3, padding=1), nn.ReLU(),
                                          nn.MaxPool2D(2), nn.Conv2D(4, 8, 3, padding=1),
                                          nn.ReLU())
            self.flatten = nn.Flatten()
            self.classifier = nn.Linear(8 * 4 * 4, 10)

        def forward(self, x):
            return self.classifier(self.flatten(self.features(x)))

    return Net()


def fit_tiny_cnn(logdir: str, *, steps: int = 6, profile_steps=(2, 5), batch: int = 16):
    """Train ``steps`` batches of random 1x8x8 images; returns the network."""
    import visualdl.framework as vf
    from visualdl.framework import nn

    vf.seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps * batch, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 10, steps * batch).astype(np.int64)
    net = tiny_cnn()
    model = vf.Model(net)
    model.prepare(vf.optim.SGD(net.parameters(), 0.05), nn.CrossEntropyLoss())
    cb = vf.callbacks.VisualDL(logdir, histogram_freq=1, log_images=False,
                               activation_layers=LAYERS, profile_steps=profile_steps,
                               system_metrics=False)
    model.fit(vf.data.TensorDataset(x, y), batch_size=batch, epochs=1, verbose=0,
              callbacks=[cb])
    return net


def torch_profiled(run_dir: str, torch, steps: int = 3) -> None:
    """A small torch CNN (nested modules, a BatchNorm, a Dropout) exported with
    ``torch.onnx.export`` (``dynamo=False``: no onnxscript needed) and logged with
    ``add_graph`` into ``run_dir``, beside a Kineto trace of ``steps`` training steps with
    ``record_shapes`` and ``with_stack`` (its ``nn.Module`` events) written there by
    ``tensorboard_trace_handler``: the pairing "Show in graph" relies on."""
    import io

    import onnx

    from visualdl import LogWriter

    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn1 = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)

        def forward(self, x):
            return self.relu(self.conv2(self.relu(self.bn1(self.conv1(x)))))

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer1 = nn.Sequential(Block())
            self.drop = nn.Dropout(0.1)
            self.fc = nn.Linear(8 * 8 * 8, 10)

        def forward(self, x):
            return self.fc(self.drop(self.layer1(x).flatten(1)))

    torch.manual_seed(0)
    net = Net()
    x = torch.randn(4, 3, 8, 8)
    net.eval()
    buf = io.BytesIO()
    torch.onnx.export(net, (x,), buf, dynamo=False, input_names=["x"], output_names=["y"])
    net.train()
    with LogWriter(run_dir, system_metrics=False) as writer:
        writer.add_graph(onnx.load_from_string(buf.getvalue()), step=0, tag="model")
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    prof = torch.profiler
    with prof.profile(activities=[prof.ProfilerActivity.CPU], record_shapes=True,
                      with_stack=True, with_modules=True,
                      schedule=prof.schedule(wait=0, warmup=1, active=steps),
                      on_trace_ready=prof.tensorboard_trace_handler(run_dir,
                                                                    worker_name="worker0")) as p:
        for _ in range(steps + 1):
            opt.zero_grad()
            net(x).square().mean().backward()
            opt.step()
            p.step()
