"""Writes ``data/``: small networks saved by PaddlePaddle 3.3.1 as PIR JSON programs (the
default of Paddle >= 3.0), and what Paddle itself reports of each, for the tests to compare
visualdl's reading against.

* ``mlp/inference.json``: ``paddle.jit.save(net, "mlp/inference")`` of two ``Linear``
  layers with ``paddle.split`` and ``paddle.concat`` between them (``builtin.combine`` and
  ``builtin.split``, PIR's vectors of values);
* ``cnn/net.json``: ``paddle.jit.save(net, "cnn/net")`` of ``Sequential(Block)`` holding
  ``Conv2D``, ``BatchNorm2D`` (eval mode), relu and max pooling, then a ``Linear``: the
  ``struct_name`` attribute holds the layer path (``/Sequential/Block/Conv2D/``), and the
  file is named after its ``.pdiparams`` stem, not ``inference``;
* ``cf/inference.json``: ``paddle.jit.save`` of a ``Linear`` followed by an ``if``/``else``
  on its mean and a ``while`` loop (``pd_op.if`` and ``pd_op.while`` with nested regions);
* ``static/model.json``: ``paddle.static.save_inference_model(".../model", ...)`` of
  ``paddle.static.nn.fc`` under ``paddle.static.name_scope``.

Parameters (``*.pdiparams``) are not kept: the graph view reads the program. Each
``ref.json`` holds Paddle's own view of the program as
``paddle.static.load_inference_model`` loads it: the main block's operators in order with
their full names (``pd_op.matmul``), their ``struct_name``, their operands (the index of the
producing operator in the block and which of its results), their results' dtypes and shapes,
the parameters' and inputs' names, and for control flow the operators of each nested block
and the main-block operators those blocks read. Run in a throwaway venv::

    python3.11 -m venv /tmp/pd33 && /tmp/pd33/bin/pip install paddlepaddle==3.3.1
    /tmp/pd33/bin/python tests/sources/paddle/make_pir_programs.py tests/sources/paddle/data

(The files here were written by paddlepaddle 3.3.1, the CPU wheel, on Python 3.11.7, with
Paddle's defaults: the PIR API is on, so ``jit.save`` and ``save_inference_model`` write
``.json``. ``struct_name`` counts layers per class and process, so ``cf`` shows
``/Linear_3/``; ``paddle.static.name_scope`` leaves no ``struct_name``: ``static`` is flat.)
"""

import glob
import json
import os
import sys


def _keep_program_only(folder):
    for path in glob.glob(os.path.join(folder, "*")):
        if not path.endswith((".json",)):
            os.remove(path)


def _reference(prefix):
    """What Paddle reports of the program saved at ``prefix`` (see the module docstring)."""
    import paddle

    exe = paddle.static.Executor(paddle.CPUPlace())
    program, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
    block = program.global_block()
    index = {op.id(): i for i, op in enumerate(block.ops)}

    def source(value):
        if not value.initialized():  # an optional operand left out
            return None
        op = value.get_defining_op()
        if op is None or op.id() not in index:
            return None
        return [index[op.id()], [r.is_same(value) for r in op.results()].index(True)]

    ops = []
    for op in block.ops:
        attrs = op.attrs()
        entry = {
            "op": op.name(),
            "struct_name": attrs.get("struct_name", ""),
            "inputs": [source(v) for v in op.operands_source()],
            "outputs": [[str(r.dtype).replace("paddle.", ""), list(r.shape)]
                        if r.is_dense_tensor_type() else None for r in op.results()],
        }
        for key in ("parameter_name", "name"):
            if key in attrs:
                entry[key] = attrs[key]
        if op.num_regions():
            entry["blocks"] = [[inner.name() for inner in b.ops] for b in op.blocks()]
            outer = []
            for b in op.blocks():
                for inner in b.ops:
                    for v in inner.operands_source():
                        found = source(v)
                        if found is not None and found not in outer:
                            outer.append(found)
            entry["reads"] = outer
        ops.append(entry)
    with open(os.path.join(os.path.dirname(prefix), "ref.json"), "w") as f:
        json.dump({"paddle": paddle.__version__, "feeds": feeds, "ops": ops}, f, indent=1)


def main(out):
    import paddle
    import paddle.nn as nn

    F = nn.functional  # noqa: N806

    class MLP(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 8)
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            a, b = paddle.split(F.relu(self.fc(x)), 2, axis=1)
            return self.head(paddle.concat([b, a], axis=1))

    class Block(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2D(4)

        def forward(self, x):
            return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)

    class CNN(nn.Layer):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(Block())
            self.fc = nn.Linear(4 * 4 * 4, 10)

        def forward(self, x):
            return self.fc(paddle.flatten(self.features(x), 1))

    class Branchy(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            if paddle.mean(y) > 0:
                y = y * 2
            else:
                y = y - 1
            i = paddle.zeros([1], "int64")
            while i < 3:
                y = y + 1
                i = i + 1
            return y

    saved = []
    for folder, stem, layer, spec in [
        ("mlp", "inference", MLP(), [None, 4]),
        ("cnn", "net", CNN(), [None, 1, 8, 8]),
        ("cf", "inference", Branchy(), [None, 4]),
    ]:
        layer.eval()
        name = "image" if len(spec) == 4 else "x"
        prefix = os.path.join(out, folder, stem)
        paddle.jit.save(layer, prefix, input_spec=[paddle.static.InputSpec(spec, "float32",
                                                                           name)])
        saved.append(prefix)

    paddle.enable_static()
    main_program, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main_program, startup):
        x = paddle.static.data("x", [None, 4], "float32")
        with paddle.static.name_scope("encoder"):
            h = paddle.static.nn.fc(x, 6, activation="relu")
        y = paddle.static.nn.fc(h, 3)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    prefix = os.path.join(out, "static", "model")
    paddle.static.save_inference_model(prefix, [x], [y], exe, program=main_program)
    saved.append(prefix)

    for prefix in saved:
        _reference(prefix)
        _keep_program_only(os.path.dirname(prefix))
        print(prefix, sorted(os.listdir(os.path.dirname(prefix))))


if __name__ == "__main__":
    main(sys.argv[1])
