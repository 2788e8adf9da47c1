"""ONNX export of every layer type (and the functional op set): the file passes the full
checker, runs in onnxruntime with a dynamic batch, and vf.jit.load matches onnxruntime --
all within 1e-5 of the eager model."""

import warnings

import numpy as np
import onnx
import pytest
from .onnx_parity import check_parity

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import dispatch, nn
from visualdl.framework.onnx.converters import CONVERTERS


def rand(*shape, seed=0):
    return lambda b: np.random.default_rng(seed + b).standard_normal((b,) + shape).astype(np.float32)


def _trained_bn(layer, shape):
    """Give a batch-norm layer non-trivial running statistics and affine parameters."""
    layer.train()
    for i in range(3):
        layer(vf.tensor(np.random.default_rng(i).normal(1.5, 2.0, (8,) + shape).astype(np.float32)))
    if layer.weight is not None:
        layer.weight.numpy()[...] = np.linspace(0.5, 1.5, layer.weight.shape[0])
        layer.bias.numpy()[...] = np.linspace(-0.2, 0.3, layer.bias.shape[0])
    return layer


def _seq(*layers):
    vf.seed(0)
    return nn.Sequential(*layers)


class Functional(nn.Layer):
    """The functional op set in one forward: arithmetic, math, comparisons, reductions,
    shape ops and indexing."""

    def __init__(self):
        super().__init__()
        vf.seed(1)
        self.w = nn.Parameter(np.random.default_rng(1).standard_normal((6, 4)).astype(np.float32))

    def forward(self, x):
        h = vf.matmul(x, self.w)                              # (B, 4)
        a = vf.exp(h * 0.1) - vf.log(vf.abs(h) + 1.0) / 2.0
        b = vf.sqrt(vf.abs(h) + 0.5) ** 2.0 + vf.pow(vf.abs(h) + 1.0, vf.full((4,), 0.5))
        c = vf.maximum(a, b * 0.3) + vf.minimum(-a, b)
        mask = vf.cast(h > 0.0, "float32") + vf.cast(h <= -0.5, "float32") \
            + vf.cast(h != h, "float32") + vf.cast(vf.equal(h, h), "float32") \
            + vf.cast(h < 0.1, "float32") + vf.cast(h >= 0.2, "float32")
        d = vf.concat([c, mask, vf.neg(h)], axis=1)           # (B, 12)
        e = d.reshape(x.shape[0], 3, 4).transpose(0, 2, 1)    # (B, 4, 3)
        f = e[:, 1:, ::2] + e[:, -1:, None, 0].squeeze(2).unsqueeze(-1)  # (B, 3, 2)
        g = vf.stack([f.sum(axis=1), f.mean(axis=1), f.max(axis=1), f.min(axis=1)], axis=1)
        s = vf.log_softmax(g.flatten(1), axis=1) + vf.softmax(g.flatten(1), axis=-1)
        t = s[:, np.array([0, 3, 5])] + s.mean(axis=1, keepdim=True)
        u = t.unsqueeze(1).expand(x.shape[0], 2, 3).reshape(x.shape[0], 6)
        idx = vf.cast(vf.argmax(u, axis=1), "float32")
        return vf.concat([u / (1.0 + vf.abs(u)), idx.unsqueeze(1)], axis=1)


CASES = {
    "linear": (lambda: _seq(nn.Linear(6, 4)), [rand(6)]),
    "linear_no_bias_3d": (lambda: _seq(nn.Linear(6, 4, bias=False)), [rand(2, 6)]),
    "linear_3d": (lambda: _seq(nn.Linear(6, 4)), [rand(2, 6)]),
    "conv2d": (lambda: _seq(nn.Conv2D(2, 4, 3, stride=2, padding=1)), [rand(2, 9, 9)]),
    "conv2d_dilated_grouped": (lambda: _seq(nn.Conv2D(4, 6, 3, dilation=2, groups=2, bias=False)),
                               [rand(4, 9, 9)]),
    "max_pool2d": (lambda: _seq(nn.MaxPool2D(3, stride=2, padding=1)), [rand(2, 7, 7)]),
    "avg_pool2d": (lambda: _seq(nn.AvgPool2D(2)), [rand(2, 6, 6)]),
    "avg_pool2d_padded": (lambda: _seq(nn.AvgPool2D(3, 2, 1, count_include_pad=False)),
                          [rand(2, 7, 7)]),
    "batch_norm1d": (lambda: _seq(_trained_bn(nn.BatchNorm1D(5), (5,))), [rand(5)]),
    "batch_norm1d_3d": (lambda: _seq(_trained_bn(nn.BatchNorm1D(5), (5, 7))), [rand(5, 7)]),
    "batch_norm2d": (lambda: _seq(_trained_bn(nn.BatchNorm2D(3), (3, 4, 4))), [rand(3, 4, 4)]),
    "batch_norm2d_no_affine": (lambda: _seq(_trained_bn(nn.BatchNorm2D(3, affine=False), (3, 4, 4))),
                               [rand(3, 4, 4)]),
    "layer_norm": (lambda: _seq(nn.LayerNorm(6)), [rand(4, 6)]),
    "layer_norm_2d_no_affine": (lambda: _seq(nn.LayerNorm((4, 6), elementwise_affine=False)),
                                [rand(4, 6)]),
    "embedding": (lambda: _seq(nn.Embedding(20, 5)),
                  [lambda b: np.random.default_rng(b).integers(0, 20, (b, 7))]),
    "relu": (lambda: _seq(nn.Linear(6, 6), nn.ReLU()), [rand(6)]),
    "gelu": (lambda: _seq(nn.GELU()), [rand(6)]),
    "tanh": (lambda: _seq(nn.Tanh()), [rand(6)]),
    "sigmoid": (lambda: _seq(nn.Sigmoid()), [rand(6)]),
    "leaky_relu": (lambda: _seq(nn.LeakyReLU(0.2)), [rand(6)]),
    "softmax": (lambda: _seq(nn.Softmax(axis=1)), [rand(4, 3)]),
    "flatten_dropout_identity": (lambda: _seq(nn.Flatten(), nn.Dropout(0.5), nn.Identity(),
                                              nn.Linear(18, 3)), [rand(2, 3, 3)]),
    "identity_alone": (lambda: _seq(nn.Identity()), [rand(3)]),
    "layer_list": (lambda: _LayerListNet(), [rand(4)]),
    "functional_ops": (lambda: Functional(), [rand(6)]),
    "cross_entropy_loss": (lambda: _LossNet(nn.CrossEntropyLoss()),
                           [rand(5), lambda b: np.arange(b) % 5]),
    "mse_loss": (lambda: _LossNet(nn.MSELoss()), [rand(5), rand(5, seed=7)]),
}


class _LayerListNet(nn.Layer):
    def __init__(self):
        super().__init__()
        vf.seed(2)
        self.blocks = nn.LayerList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = F.relu(block(x)) + x
        return x


class _LossNet(nn.Layer):
    def __init__(self, loss):
        super().__init__()
        vf.seed(3)
        self.fc = nn.Linear(5, 5)
        self.loss = loss

    def forward(self, x, y):
        return self.loss(self.fc(x), y)


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_parity(case, tmp_path):
    factory, makers = CASES[case]
    net = factory()
    check_parity(net, lambda b: [m(b) for m in makers], str(tmp_path / f"{case}.onnx"),
                 dynamic_batch=case not in ("cross_entropy_loss", "mse_loss"))


def test_every_layer_type_has_a_parity_case():
    layer_types = {getattr(nn, name) for name in nn.__all__
                   if isinstance(getattr(nn, name), type) and issubclass(getattr(nn, name), nn.Layer)}
    covered = {type(layer) for factory, _ in CASES.values()
               for layer in factory().sublayers(include_self=True)}
    assert layer_types - covered == {nn.Layer}


def test_every_framework_op_has_a_converter():
    assert set(dispatch.registered_ops()) - set(CONVERTERS) == set()


def test_gelu_with_opset_20_uses_the_standard_op(tmp_path):
    model = check_parity(_seq(nn.Linear(3, 3), nn.GELU()), lambda b: [rand(3)(b)],
                         str(tmp_path / "gelu20.onnx"), opset=20)
    assert [n.op_type for n in model.graph.node] == ["Gemm", "Gelu"] and not model.functions


def test_node_names_carry_the_layer_hierarchy(tmp_path):
    class Block(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(2, 2, 3, padding=1)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.conv(x)) + x

    class Encoder(nn.Layer):
        def __init__(self):
            super().__init__()
            self.block1 = Block()
            self.block2 = Block()

        def forward(self, x):
            return self.block2(self.block1(x))

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(32, 3))

        def forward(self, x):
            return F.softmax(self.head(self.encoder(x)))

    model = check_parity(Net(), lambda b: [rand(2, 4, 4)(b)], str(tmp_path / "named.onnx"))
    names = [n.name for n in model.graph.node]
    assert names == ["encoder/block1/conv", "encoder/block1/act", "encoder/block1/add",
                     "encoder/block2/conv", "encoder/block2/act", "encoder/block2/add",
                     "head/0", "head/1", "softmax"]
    inits = {i.name for i in model.graph.initializer}
    assert {"encoder.block1.conv.weight", "head.1.bias"} <= inits
    assert [i.name for i in model.graph.input] == ["x"]
    assert [o.name for o in model.graph.output] == ["output"]


def test_trace_records_a_static_program():
    vf.seed(0)
    net = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5), nn.ReLU())
    net.train()
    program = vf.jit.trace(net, vf.randn((2, 4)))
    assert net.training and net[1].training  # modes restored
    assert [n.op for n in program.nodes] == ["linear", "relu"]  # eval mode: dropout is off
    assert [v.name for v in program.inputs] == ["x"]  # forward's parameter name
    assert program.nodes[0].inputs == ["x", "0.weight", "0.bias"]
    assert set(program.initializers) == {"0.weight", "0.bias"}
    np.testing.assert_array_equal(program.initializers["0.weight"], net[0].weight.numpy())
    assert program.outputs[0].shape == (2, 3) and program.outputs[0].batched
    assert "linear" in str(program)


def test_unsupported_ops_raise_clear_errors(tmp_path):
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"], name="ok"),
         helper.make_node("Einsum", ["h", "h"], ["y"], name="mix", equation="ij,ij->i")],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "einsum.onnx"
    onnx.save(model, str(path))
    with pytest.raises(vf.jit.UnsupportedOpError, match="'Einsum' \\(node 'mix'\\)"):
        vf.jit.load(str(path))

    class Masked(nn.Layer):
        def forward(self, x):
            return x[x.numpy() > 0]

    with pytest.raises(vf.onnx.UnsupportedExportError, match="getitem"):
        vf.onnx.export(Masked(), vf.randn((3, 2)), str(tmp_path / "masked.onnx"))
    with pytest.raises(vf.onnx.UnsupportedExportError, match="batch statistics"):
        vf.onnx.export(nn.Sequential(nn.BatchNorm1D(2, track_running_stats=False)),
                       vf.randn((3, 2)), str(tmp_path / "bn.onnx"))


def test_jit_load_fine_tunes_with_framework_autograd(tmp_path):
    vf.seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    path = str(tmp_path / "mlp.onnx")
    vf.onnx.export(net, vf.randn((3, 4)), path)
    loaded = vf.jit.load(path)
    assert sorted(loaded.state_dict()) == sorted(net.state_dict())
    x, y = vf.randn((5, 4)), vf.tensor([0, 1, 1, 0, 1])
    F.cross_entropy(loaded(x), y).backward()
    F.cross_entropy(net(x), y).backward()
    np.testing.assert_allclose(loaded.state_dict()["0.weight"].grad.numpy(),
                               net[0].weight.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_jit_load_runs_a_pytorch_export(tmp_path, torch):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3, padding=1), torch.nn.BatchNorm2d(4),
                              torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                              torch.nn.Linear(64, 10), torch.nn.Tanh()).eval()
    path = str(tmp_path / "torch.onnx")
    with warnings.catch_warnings():  # the (deprecated) TorchScript exporter needs no onnxscript
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(net, (torch.randn(2, 1, 8, 8),), path, dynamo=False, opset_version=17,
                          input_names=["x"], dynamic_axes={"x": {0: "batch"}})
    x = np.random.default_rng(0).standard_normal((5, 1, 8, 8)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(vf.jit.load(path).run(x)[0], expected, rtol=1e-5, atol=1e-5)


def test_layer_to_onnx_traces_on_its_input_spec():
    net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    proto = net.to_onnx([vf.jit.InputSpec([2, 4], "float32")])
    assert isinstance(proto, onnx.ModelProto)
    assert [n.op_type for n in proto.graph.node][-1] == "Relu"
    with pytest.raises(ValueError, match="needs input_spec"):
        net.to_onnx()
