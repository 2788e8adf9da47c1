"""One parameter element's SGD and Adam/AdamW updates."""

import math


def sgd_step(p, g, buf, lr, momentum, weight_decay, nesterov):
    """(new p, new momentum buffer); the buffer is unchanged when momentum is 0."""
    d = g + weight_decay * p
    if momentum != 0.0:
        buf = momentum * buf + d
        d = d + momentum * buf if nesterov else buf
    return p - lr * d, buf


def adam_step(p, g, m, v, lr, beta1, beta2, eps, weight_decay, decoupled, bc1, bc2):
    """(new p, new m, new v); decoupled=True is AdamW's p -= lr*wd*p before the Adam step."""
    if decoupled:
        p -= lr * weight_decay * p
    else:
        g += weight_decay * p
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * g * g
    return p - lr * (m / bc1) / (math.sqrt(v / bc2) + eps), m, v
