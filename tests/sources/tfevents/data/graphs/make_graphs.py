"""Writes the graph fixtures of test_tf_graphs.py (run in this folder):

    python -m venv /tmp/tfv && /tmp/tfv/bin/pip install tensorflow-cpu==2.21.0 tf_keras==2.21.0
    for w in keras3 tfkeras lstm trace; do /tmp/tfv/bin/python make_graphs.py $w; done

then each run folder's event file is kept (the callback's train/ sub-folder flattened).
"""
import os, sys, numpy as np
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf
which = sys.argv[1]
rng = np.random.default_rng(0)
if which in ("keras3", "tfkeras"):
    keras = __import__("keras") if which == "keras3" else __import__("tf_keras")
    L = keras.layers
    # an encoder model used as a layer (nested), two inputs, a shared layer, a Sequential head
    enc_in = keras.Input((6,), name="enc_in")
    enc = keras.Model(enc_in, L.Dense(4, activation="tanh", name="enc_dense")(enc_in), name="encoder")
    a = keras.Input((6,), name="left"); b = keras.Input((6,), name="right")
    shared = L.Dense(6, name="shared")
    za, zb = enc(shared(a)), enc(shared(b))
    head = keras.Sequential([L.Dense(5, activation="relu", name="h1"), L.Dropout(0.2, name="h_drop"), L.Dense(2, name="h2")], name="head")
    out = head(L.Concatenate(name="concat")([za, zb]))
    m = keras.Model([a, b], out, name="siamese")
    m.compile("adam", "mse")
    X = [rng.random((16, 6)).astype("float32"), rng.random((16, 6)).astype("float32")]
    m.fit(X, rng.random((16, 2)).astype("float32"), epochs=1, batch_size=8, verbose=0,
          callbacks=[keras.callbacks.TensorBoard(which, write_graph=True)])
elif which == "lstm":
    import tf_keras as keras
    L = keras.layers
    inp = keras.Input((3, 2), name="seq")
    m = keras.Model(inp, L.Dense(2, name="probs")(L.LSTM(3, name="lstm")(inp)), name="rnn")
    m.compile("sgd", "mse", steps_per_execution=2)
    m.fit(rng.random((8, 3, 2)).astype("float32"), rng.random((8, 2)).astype("float32"), epochs=1,
          batch_size=4, verbose=0, callbacks=[keras.callbacks.TensorBoard("lstm", write_graph=True, write_steps_per_second=True)])
elif which == "trace":
    w1 = tf.Variable(rng.random((4, 3)).astype("float32"), name="w1")
    @tf.function
    def inner(x):
        return tf.nn.relu(tf.matmul(x, w1))
    @tf.function
    def step(x):
        return tf.reduce_sum(inner(x)) + tf.cond(tf.reduce_sum(x) > 0, lambda: 1.0, lambda: -1.0)
    writer = tf.summary.create_file_writer("trace")
    tf.summary.trace_on(graph=True)
    step(tf.ones((2, 4)))
    with writer.as_default():
        tf.summary.trace_export("step_trace", step=0)
