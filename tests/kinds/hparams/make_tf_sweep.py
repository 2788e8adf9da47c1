"""Writes ``data/tf_sweep/``: a small hyper-parameter sweep laid out as TensorBoard's HParams
dashboard expects, by TensorFlow's own ``hparams`` API (as in TensorFlow's HParams
tutorial): ``hp.hparams_config`` (hparams with domains, metrics) in the parent folder, one
sub-folder per trial with ``hp.hparams`` and the metric scalars.

Written once with tensorflow-cpu 2.21.0 and tensorboard 2.21.0 in a throwaway venv::

    python3 -m venv /tmp/tfv && /tmp/tfv/bin/pip install tensorflow-cpu==2.21.0 tensorboard
    /tmp/tfv/bin/python make_tf_sweep.py data/tf_sweep
"""

import os
import sys


def main(out: str) -> None:
    import tensorflow as tf
    from tensorboard.plugins.hparams import api as hp

    units = hp.HParam("num_units", hp.Discrete([16, 32]))
    dropout = hp.HParam("dropout", hp.RealInterval(0.1, 0.2))
    optimizer = hp.HParam("optimizer", hp.Discrete(["adam", "sgd"]))
    with tf.summary.create_file_writer(out).as_default():
        hp.hparams_config(hparams=[units, dropout, optimizer],
                          metrics=[hp.Metric("accuracy", display_name="Accuracy"),
                                   hp.Metric("loss", group="validation")])
    trial = 0
    for n in units.domain.values:
        for rate in (dropout.domain.min_value, dropout.domain.max_value):
            for opt in optimizer.domain.values:
                run = os.path.join(out, f"run-{trial}")
                with tf.summary.create_file_writer(run).as_default():
                    hp.hparams({units: n, dropout: rate, optimizer: opt}, trial_id=f"run-{trial}")
                    for step in range(3):
                        tf.summary.scalar("accuracy", 0.5 + trial / 100 + step / 10, step=step)
                with tf.summary.create_file_writer(os.path.join(run, "validation")).as_default():
                    tf.summary.scalar("loss", 1.0 - trial / 100, step=2)
                trial += 1


if __name__ == "__main__":
    main(sys.argv[1])
