"""A training loop in the style of TensorFlow's tutorials, with NumPy and srcgrad.

Fits y = 3x - 2 + noise with a tiny two-layer model; each epoch takes the
gradient of the mini-batch loss with a GradientTape, updates the Variables,
and prints the last loss and the epoch's running mean loss.
Run: python examples/training_loop.py
"""
import numpy as np

import srcgrad as tf

rng = np.random.default_rng(0)
x_train = rng.uniform(-1.0, 1.0, size=(256, 1))
y_train = 3.0 * x_train - 2.0 + 0.05 * rng.normal(size=(256, 1))

W1 = tf.Variable(rng.normal(size=(1, 8)) * 0.5, name="W1")
b1 = tf.Variable(np.zeros(8), name="b1")
W2 = tf.Variable(rng.normal(size=(8, 1)) * 0.5, name="W2")
b2 = tf.Variable(np.zeros(1), name="b2")
variables = [W1, b1, W2, b2]


def model(x):
    hidden = np.tanh(x @ W1 + b1)
    return hidden @ W2 + b2


def mse(y_true, y_pred):
    return np.mean((y_true - y_pred) ** 2)


learning_rate = 0.1
train_loss = tf.metrics.Mean(name="train_loss")
for epoch in range(10):
    train_loss.reset_state()
    for start in range(0, 256, 32):
        xb, yb = x_train[start:start + 32], y_train[start:start + 32]
        with tf.GradientTape() as tape:
            loss = mse(yb, model(xb))
        grads = tape.gradient(loss, variables)
        for v, g in zip(variables, grads):
            v.assign_sub(learning_rate * g)
        train_loss(loss)
    print(f"epoch {epoch + 1:2d}: loss {loss:.5f}, mean loss {train_loss.result():.5f}")

print("\nThe gradient the tape generated for the block (tape.source):\n")
print(tape.source)
