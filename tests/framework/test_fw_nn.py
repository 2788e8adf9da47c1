"""Layers: registration and dotted names, state dicts, train/eval behaviour, save/load."""

import numpy as np
import pytest

import visualdl.framework as vf
import visualdl.framework.nn.functional as F
from visualdl.framework import nn

try:
    import torch
except ImportError:
    torch = None


class Block(nn.Layer):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2D(1, 4, 3, padding=1), nn.BatchNorm2D(4), nn.ReLU())
        self.head = nn.Linear(4 * 4 * 4, 3)
        self.scale = 2.0

    def forward(self, x):
        return self.head(F.flatten(self.encoder(x), 1)) * self.scale


def test_named_parameters_are_dotted_and_stable():
    vf.seed(0)
    names = [n for n, _ in Block().named_parameters()]
    assert names == ["encoder.0.weight", "encoder.0.bias", "encoder.1.weight", "encoder.1.bias",
                     "head.weight", "head.bias"]
    sd = Block().state_dict()
    assert list(sd) == names[:4] + ["encoder.1.running_mean", "encoder.1.running_var"] + names[4:]
    assert [n for n, _ in Block().named_sublayers()][:2] == ["encoder", "encoder.0"]


def test_save_load_roundtrip_restores_outputs(tmp_path):
    vf.seed(1)
    a = Block()
    x = vf.randn((2, 1, 4, 4))
    a(x)  # update running stats
    a.eval()
    path = tmp_path / "block.vfp"
    vf.save(a.state_dict(), path)
    vf.seed(2)
    b = Block()
    b.load_state_dict(vf.load(path))
    b.eval()
    np.testing.assert_allclose(b(x).numpy(), a(x).numpy(), rtol=1e-6)


def test_load_state_dict_checks_names_and_shapes():
    net = nn.Linear(3, 2)
    with pytest.raises(KeyError):
        net.load_state_dict({"weight": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="shape"):
        net.load_state_dict({"weight": np.zeros((3, 3)), "bias": np.zeros(2)})
    missing, unexpected = net.load_state_dict({"weight": np.ones((2, 3))}, strict=False)
    assert missing == ["bias"] and unexpected == []
    assert net.weight.numpy().sum() == 6


def test_a_state_of_another_shape_loads_nothing_and_names_every_difference(tmp_path):
    """A checkpoint of a model whose first layer matches and last layers differ: Model.load
    refuses it whole (the first layer is not left overwritten) and names both entries."""
    vf.seed(0)
    mine = vf.Model(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)))
    vf.seed(1)
    other = vf.Model(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 5)))
    other.save(str(tmp_path / "other"))
    before = {k: v.numpy().copy() for k, v in mine.network.state_dict().items()}
    with pytest.raises(ValueError) as err:
        mine.load(str(tmp_path / "other"))
    assert "2.weight: shape (5, 8) does not match (3, 8)" in str(err.value)
    assert "2.bias: shape (5,) does not match (3,)" in str(err.value)
    assert "nothing was loaded" in str(err.value)
    for k, v in mine.network.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)


def test_train_eval_switches_dropout_and_batch_norm():
    net = nn.Sequential(nn.Dropout(0.5), nn.BatchNorm1D(3))
    x = vf.randn((8, 3))
    net.eval()
    assert not net[0].training and not net[1].training
    y = net(x).numpy()  # eval: dropout is identity, BN uses running stats (0, 1)
    np.testing.assert_allclose(y, x.numpy() / np.sqrt(1 + 1e-5), rtol=1e-5)
    net.train()
    assert net.training and net[1].training


@pytest.mark.torch
def test_batch_norm_running_stats_match_torch():
    x = np.random.default_rng(0).standard_normal((6, 3, 2, 2)).astype(np.float32)
    ours = nn.BatchNorm2D(3, momentum=0.2)
    ref = torch.nn.BatchNorm2d(3, momentum=0.2)
    for _ in range(2):
        y = ours(vf.tensor(x))
        r = ref(torch.tensor(x))
    np.testing.assert_allclose(y.numpy(), r.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.running_mean.numpy(), ref.running_mean.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours.running_var.numpy(), ref.running_var.numpy(), rtol=1e-5)
    ours.eval()
    ref.eval()
    np.testing.assert_allclose(ours(vf.tensor(x)).numpy(), ref(torch.tensor(x)).detach().numpy(),
                               rtol=1e-4, atol=1e-5)


def test_layers_shapes_and_init():
    vf.seed(0)
    lin = nn.Linear(100, 7)
    bound = 1 / np.sqrt(100)
    assert lin.weight.shape == (7, 100) and np.abs(lin.weight.numpy()).max() <= bound
    conv = nn.Conv2D(4, 6, 3, stride=2, padding=1, groups=2)
    assert conv(vf.randn((2, 4, 9, 9))).shape == (2, 6, 5, 5)
    assert nn.MaxPool2D(2)(vf.randn((1, 1, 5, 5))).shape == (1, 1, 2, 2)
    assert nn.AvgPool2D(3, 1, 1)(vf.randn((1, 2, 5, 5))).shape == (1, 2, 5, 5)
    emb = nn.Embedding(5, 3, padding_idx=0)
    assert np.all(emb.weight.numpy()[0] == 0)
    seq = nn.Sequential(("fc", nn.Linear(2, 2)), ("act", nn.GELU()))
    assert [n for n, _ in seq.named_parameters()] == ["fc.weight", "fc.bias"] and len(seq) == 2
    ll = nn.LayerList([nn.Tanh(), nn.Sigmoid()])
    assert len(list(ll)) == 2 and isinstance(ll[1], nn.Sigmoid)
    with pytest.raises(TypeError):
        lin.weight = np.zeros((7, 100))


def test_embedding_gradient_is_row_sparse():
    emb = nn.Embedding(1000, 4)
    emb(vf.tensor([[3, 5, 3]])).sum().backward()
    g = emb.weight.grad
    assert isinstance(g, vf.RowSparseGrad)
    g.coalesce()
    assert g.indices.tolist() == [3, 5]
    dense = g.numpy()
    assert dense.shape == (1000, 4) and dense[3].tolist() == [2.0] * 4 and dense.sum() == 12


def test_layer_norm_layer_and_flatten():
    ln = nn.LayerNorm(4)
    x = vf.randn((2, 3, 4))
    y = ln(x).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(y.std(-1), 1, rtol=1e-3)
    assert nn.Flatten()(x).shape == (2, 12)
