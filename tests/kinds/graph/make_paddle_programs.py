"""Writes ``data/paddle/``: one small network saved under each name Paddle gives programs.

* ``fluid18/__model__``: ``fluid.io.save_inference_model`` of PaddlePaddle 1.8.5 (Python
  3.7; the fluid era's name);
* ``jit26/inference.pdmodel``: ``paddle.jit.save(layer, ".../inference")`` of PaddlePaddle
  2.6.2 (what PaddleOCR, PaddleDetection and PaddleClas export);
* ``static26/model.pdmodel``: ``paddle.static.save_inference_model(".../model", ...)`` of
  PaddlePaddle 2.6.2.

Parameters (``__params__``, ``*.pdiparams``) are not kept: the graph view reads the program.
Each ``ops.json`` lists the operator types of the program's main block as Paddle loads it.
Run in throwaway venvs (the wheels need ``numpy<2``)::

    python3.7 -m venv /tmp/pd37 && /tmp/pd37/bin/pip install paddlepaddle==1.8.5 protobuf==3.20.3
    /tmp/pd37/bin/python make_paddle_programs.py data/paddle
    python3.11 -m venv /tmp/pd26 && /tmp/pd26/bin/pip install paddlepaddle==2.6.2 'numpy<2'
    /tmp/pd26/bin/python make_paddle_programs.py data/paddle
"""

import glob
import json
import os
import sys


def _keep_program_only(folder):
    for path in glob.glob(os.path.join(folder, "*")):
        if not path.endswith(("__model__", ".pdmodel", "ops.json")):
            os.remove(path)


def _ops(folder, program):
    ops = [op.type for op in program.global_block().ops]
    with open(os.path.join(folder, "ops.json"), "w") as f:
        json.dump(ops, f)


def fluid(out):
    import paddle.fluid as fluid

    folder = os.path.join(out, "fluid18")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.data(name="image", shape=[None, 1, 8, 8], dtype="float32")
        conv = fluid.layers.conv2d(image, num_filters=4, filter_size=3, act="relu")
        pool = fluid.layers.pool2d(conv, pool_size=2, pool_type="max")
        logits = fluid.layers.fc(pool, size=10, act="softmax")
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    fluid.io.save_inference_model(folder, ["image"], [logits], exe, main_program=main)
    program, _, _ = fluid.io.load_inference_model(folder, exe)
    _ops(folder, program)
    _keep_program_only(folder)


def paddle2(out):
    import paddle
    import paddle.nn as nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(1, 4, 3)
            self.fc = nn.Linear(4 * 3 * 3, 10)

        def forward(self, x):
            f = paddle.nn.functional  # (paddle: a module global, as dy2static needs)
            x = f.max_pool2d(f.relu(self.conv(x)), 2)
            return self.fc(paddle.flatten(x, 1))

    spec = [paddle.static.InputSpec([None, 1, 8, 8], "float32", "image")]
    folder = os.path.join(out, "jit26")
    paddle.jit.save(Net(), os.path.join(folder, "inference"), input_spec=spec)
    paddle.enable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())
    program, _, _ = paddle.static.load_inference_model(os.path.join(folder, "inference"), exe)
    _ops(folder, program)
    _keep_program_only(folder)

    folder = os.path.join(out, "static26")
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data("image", [None, 1, 8, 8], "float32")
        conv = paddle.static.nn.conv2d(image, num_filters=4, filter_size=3, act="relu")
        logits = paddle.static.nn.fc(paddle.flatten(conv, 1), size=10)
    exe.run(startup)
    paddle.static.save_inference_model(os.path.join(folder, "model"), [image], [logits], exe,
                                       program=main)
    program, _, _ = paddle.static.load_inference_model(os.path.join(folder, "model"), exe)
    _ops(folder, program)
    _keep_program_only(folder)


if __name__ == "__main__":
    import paddle

    (fluid if paddle.__version__.startswith("1.") else paddle2)(sys.argv[1])
