"""Writes ``data/tf1/`` and ``data/tf2/``: histograms from TensorFlow's own summary ops.

``tf1``: ``tf.compat.v1.summary.histogram`` run in a graph session and written by
``tf.compat.v1.summary.FileWriter`` (a ``HistogramProto`` with TensorFlow's exponential
buckets: edges beyond the recorded min and max, runs of empty buckets collapsed, a last
empty bucket up to DBL_MAX). ``tf2``: ``tf.summary.histogram`` (the ``histograms`` plugin's
k x 3 tensor of equal-width buckets). The same values in both, per step: a normal sample,
a bimodal one with a gap, a skewed one, half zeros and half ones (every percentile falls
between two buckets), and a constant.

Written once with tensorflow-cpu 2.21.0 in a throwaway venv::

    python3 -m venv /tmp/tfv && /tmp/tfv/bin/pip install tensorflow-cpu==2.21.0 tensorboard
    /tmp/tfv/bin/python make_tf_histograms.py data
"""

import os
import sys

import numpy as np

TAGS = ("normal", "bimodal", "skewed", "halves", "constant")


def values(step: int) -> dict:
    rng = np.random.RandomState(step)
    return {
        "normal": rng.randn(400) * (1 + step),
        "bimodal": np.concatenate([rng.randn(150) - 6, rng.randn(250) + 4]),
        "skewed": rng.exponential(2.0, 300) + step,
        "halves": np.repeat([0.0, 1.0], 50 + step),
        "constant": np.full(7, 3.5),
    }


def main(out: str) -> None:
    import tensorflow as tf

    graph = tf.Graph()
    with graph.as_default():
        holders = {t: tf.compat.v1.placeholder(tf.float64, [None], name=f"{t}_values") for t in TAGS}
        merged = tf.compat.v1.summary.merge(
            [tf.compat.v1.summary.histogram(t, holders[t]) for t in TAGS])
        writer = tf.compat.v1.summary.FileWriter(os.path.join(out, "tf1"))
        with tf.compat.v1.Session(graph=graph) as sess:
            for step in range(3):
                feed = {holders[t]: v for t, v in values(step).items()}
                writer.add_summary(sess.run(merged, feed), step)
        writer.close()
    with tf.summary.create_file_writer(os.path.join(out, "tf2")).as_default():
        for step in range(3):
            for t, v in values(step).items():
                tf.summary.histogram(t, v, step=step)


if __name__ == "__main__":
    main(sys.argv[1])
