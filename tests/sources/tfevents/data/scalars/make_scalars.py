"""Writes the scalar fixtures of test_tf_scalars.py with TensorFlow's own writers
(tensorflow-cpu 2.21.0), in this folder:

    python make_scalars.py tf2 3 400 tf2   # TF2: tf.summary.scalar in a tf.function
    python make_scalars.py tf1 4 400 tf1   # TF1: tf.compat.v1.summary.scalar, merge_all, FileWriter

(bench/tf_scalars.py writes its logdirs the same way, with more tags and steps.)
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def tf2(tags: int, steps: int, out: str) -> None:
    writer = tf.summary.create_file_writer(out, max_queue=10000, flush_millis=60000)
    values = np.random.default_rng(0).random((steps, tags)).astype("float32")

    @tf.function
    def write(step, v):
        for k in range(tags):
            tf.summary.scalar(f"epoch_metric_{k}", v[k], step=step)

    with writer.as_default():
        for s in range(steps):
            write(tf.constant(s, tf.int64), values[s])
    writer.flush()


def tf1(tags: int, steps: int, out: str) -> None:
    v1 = tf.compat.v1
    v1.disable_eager_execution()
    x = v1.placeholder(tf.float32, [tags])
    for k in range(tags):
        v1.summary.scalar(f"loss_{k}", x[k])
    merged = v1.summary.merge_all()
    values = np.random.default_rng(0).random((steps, tags)).astype("float32")
    with v1.Session() as sess:
        writer = v1.summary.FileWriter(out, max_queue=10000)
        for s in range(steps):
            writer.add_summary(sess.run(merged, {x: values[s]}), s)
        writer.close()


if __name__ == "__main__":
    which, tags, steps, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    {"tf1": tf1, "tf2": tf2}[which](tags, steps, out)
