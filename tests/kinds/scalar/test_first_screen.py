"""The scalars page's first screen: /api/scalars/order puts losses and main metrics first,
then the sections most recently updated, on a logdir laid out as the demo's."""

from __future__ import annotations

import pytest

from tests.helpers.http import Client
from tests.helpers.server import serving
from visualdl import LogWriter
from visualdl.kinds.scalar.order import order, tier

ACTIVATIONS = [f"activations/{layer}.relu/{stat}" for layer in ("classifier", "features.block1",
               "features.block2") for stat in ("mean", "std", "zero_fraction")]


def write_demo_like(logdir, t0=1_700_000_000.0):
    """The demo's tags: nine activations charts sort before train/ alphabetically; the
    weights are updated last (most recent), eval before them."""
    with LogWriter(logdir=str(logdir / "cnn")) as w:
        for step in range(3):
            for tag in ("train/loss", "train/acc_top1", "train/acc_top3", "train/lr"):
                w.add_scalar(tag, 1.0 / (step + 1), step, walltime=t0 + step)
            for tag in ("eval/loss", "eval/acc_top1"):
                w.add_scalar(tag, 0.5, step, walltime=t0 + step + 0.5)
            for tag in ACTIVATIONS:
                w.add_scalar(tag, 0.1, step, walltime=t0 + step + 0.2)
            w.add_scalar("weights/fc1", 0.3, step, walltime=t0 + 100 + step)
            w.add_scalar("grads/fc1", 0.3, step, walltime=t0 + 50 + step)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("first_screen")
    write_demo_like(logdir)
    with serving(logdir) as handle:
        c = Client(handle.url)
        yield c
        c.close()


def test_demo_like_logdir_opens_on_the_loss(client):
    body = client.json("/api/scalars/order")
    assert [s["name"] for s in body["sections"]] == [
        "train", "eval", "weights", "grads", "activations"]
    assert body["tags"][:6] == ["train/loss", "train/acc_top1", "train/acc_top3", "train/lr",
                                "eval/loss", "eval/acc_top1"]
    assert [s["tier"] for s in body["sections"]] == [0, 1, 4, 4, 4]
    # recency orders the rest: weights were written last, then grads, then activations
    assert body["sections"][2]["last_update"] == 1_700_000_102.0
    assert body["tags"][-9:] == sorted(ACTIVATIONS)


def test_order_of_the_runs_asked(client):
    assert client.json("/api/scalars/order", run="cnn")["tags"][0] == "train/loss"
    assert client.json("/api/scalars/order", run="nope") == {"sections": [], "tags": []}


@pytest.mark.parametrize("tag,expected", [
    ("loss", 0), ("train/loss", 0), ("loss_G", 0), ("val_loss", 1), ("eval/loss", 1),
    ("accuracy", 2), ("train/acc_top1", 2), ("top5", 2), ("f1", 2), ("auc", 2),
    ("validation/accuracy", 3), ("test/f1", 3), ("lr", 4), ("activations/x/mean", 4),
    ("glossary/size", 4),
])
def test_tiers(tag, expected):
    assert tier(tag) == expected


def test_ties_and_tags_without_a_section():
    got = order({"loss": 5.0, "zeta/acc": 1.0, "alpha/acc": 1.0, "beta/x": None, "gamma/y": 3.0})
    assert [s["name"] for s in got["sections"]] == ["", "alpha", "zeta", "gamma", "beta"]
    assert got["tags"] == ["loss", "alpha/acc", "zeta/acc", "gamma/y", "beta/x"]
