"""srcgrad.GradientTape: TensorFlow's autodiff tutorial, written with NumPy, gives its numbers;
one test per semantic rule and per error."""
import linecache
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcgrad as tf  # the tutorial's spelling: tf.GradientTape, tf.Variable
import srcgrad


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


# ---- the tutorial ------------------------------------------------------------------------

def test_gradient_of_a_square():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    assert tape.gradient(y, x) == 6.0


def test_gradients_of_a_layer_as_list_and_dict():
    w = tf.Variable(np.random.default_rng(0).normal(size=(3, 2)), name="w")
    b = tf.Variable(np.zeros(2, dtype=np.float32), name="b")
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = np.mean(y ** 2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    assert dl_dw.shape == w.shape
    np.testing.assert_allclose(dl_db, y[0])  # d mean(y^2) / db = 2 y / 2
    np.testing.assert_allclose(dl_dw, np.outer([1., 2., 3.], y[0]))
    grad = tape.gradient(loss, {"w": w, "b": b})
    np.testing.assert_allclose(grad["b"], dl_db)


def test_what_is_watched():
    x0 = tf.Variable(3.0, name="x0")
    x1 = tf.Variable(3.0, name="x1", trainable=False)
    x2 = tf.Variable(2.0, name="x2") + 1.0  # a plain value now, not a Variable
    x3 = 3.0
    with tf.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
    assert tape.gradient(y, [x0, x1, x2, x3]) == [6.0, None, None, None]
    assert [v.name for v in tape.watched_variables()] == ["x0:0"]


def test_watching_a_constant():
    x = 3.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x ** 2
    assert tape.gradient(y, x) == 6.0


def test_watch_accessed_variables_false():
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = np.sin(x0)
        y1 = np.log1p(np.exp(x1))  # softplus
        y = y0 + y1
        ys = np.sum(y)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    assert grad["x1"] == pytest.approx(0.9999546, abs=1e-7)


def test_gradient_with_respect_to_an_intermediate():
    x = 3.0
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y) == 18.0


def test_persistent_tape():
    x = np.array([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_allclose(tape.gradient(z, x), [4.0, 108.0])
    np.testing.assert_allclose(tape.gradient(y, x), [2.0, 6.0])


def test_non_scalar_targets_are_summed():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x ** 2
        y1 = 1 / x
    assert tape.gradient({"y0": y0, "y1": y1}, x) == pytest.approx(3.75)
    with tf.GradientTape() as tape:
        y = x * [3., 4.]
    assert tape.gradient(y, x) == 7.0


def test_output_gradients_weigh_the_target():
    x = tf.Variable(np.array([1.0, 2.0]))
    with tf.GradientTape() as tape:
        y = x ** 2
    np.testing.assert_allclose(tape.gradient(y, x, output_gradients=np.array([1.0, 0.5])),
                               [2.0, 2.0])


def test_control_flow():
    x = 1.0
    v0 = tf.Variable(2.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1 ** 2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0 == 1.0
    assert dv1 is None  # its branch did not run (NOTE [executed lines] in gradient_tape.py)
    assert tape.gradient(result, x) is None  # only control depends on x


def test_control_flow_under_another_tracer_counts_every_line():
    x, v0, v1 = 1.0, tf.Variable(2.0), tf.Variable(2.0)
    sys.settrace(lambda *a: None)  # a debugger or coverage: the tape stays out of its way
    try:
        with tf.GradientTape() as tape:
            result = v0 if x > 0.0 else v1 ** 2
    finally:
        sys.settrace(None)
    assert tape.gradient(result, [v0, v1]) == [1.0, 0.0]


def test_unconnected_gradients():
    x = tf.Variable(2.)
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None
    x = tf.Variable([2., 2.])
    with tf.GradientTape() as tape:
        z = y ** 2
    np.testing.assert_array_equal(
        tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO), [0., 0.])


def test_replacing_a_variable_with_a_value_loses_the_gradient():
    x = tf.Variable(2.0)
    seen = []
    for epoch in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        seen.append(tape.gradient(y, x))
        x = x + 1  # should be x.assign_add(1)
    assert seen == [1.0, None]


def test_higher_order_with_nested_tapes():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx == 3.0
    assert d2y_dx2 == 6.0


def test_jacobian_and_batch_jacobian():
    x = np.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert dy_dx.shape == (201,)
    np.testing.assert_allclose(dy_dx, sigmoid(x) * (1 - sigmoid(x)), atol=1e-12)

    xb = np.random.default_rng(0).normal(size=(2, 3))
    W = tf.Variable(np.random.default_rng(1).normal(size=(3, 4)))
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(xb)
        yb = np.tanh(xb @ W)
    jb = tape.batch_jacobian(yb, xb)
    full = tape.jacobian(yb, xb)
    assert jb.shape == (2, 4, 3) and full.shape == (2, 4, 2, 3)
    for k in range(2):
        np.testing.assert_allclose(jb[k], full[k, :, k, :])
        expected = (1 - yb[k] ** 2)[:, None] * W.numpy().T
        np.testing.assert_allclose(jb[k], expected, rtol=1e-12)


# ---- more semantics -----------------------------------------------------------------------

def test_reset_and_stop_recording():
    x = tf.Variable(3.0)
    with tf.GradientTape() as t:
        a = x * 5.0
        t.reset()
        b = x * x + a  # a is a constant recorded before the reset
    assert t.gradient(b, x) == 6.0
    with tf.GradientTape() as t:
        a = x * 5.0
        with t.stop_recording():
            c = x * x
        d = a * c
    assert t.gradient(d, x) == 45.0


def test_gradient_inside_the_block_in_a_function_with_calls():
    def loss_of(v, target):
        h = np.tanh(v)
        return np.sum((h - target) ** 2)

    def step(v, target):
        with tf.GradientTape() as tape:
            loss = loss_of(v, target)
            g = tape.gradient(loss, v)
        return g

    v = tf.Variable(np.array([0.1, -0.4, 0.8]))
    target = np.array([0.5, 0.0, -0.5])
    h = np.tanh(v.numpy())
    np.testing.assert_allclose(step(v, target), 2 * (h - target) * (1 - h ** 2), rtol=1e-12)


def test_a_tape_in_a_loop_compiles_once():
    v = tf.Variable(np.array([1.0, -2.0]))
    sources = set()
    for _ in range(3):
        with tf.GradientTape() as tape:
            loss = np.sum(v ** 2)
        v.assign_sub(0.25 * tape.gradient(loss, v))
        sources.add(tape.source)
    np.testing.assert_allclose(v.numpy(), np.array([1.0, -2.0]) * 0.5 ** 3)
    assert len(sources) == 1 and "def tape_block_" in sources.pop()


def test_tape_in_a_notebook_cell():
    # IPython registers each cell's text in linecache under a name like this one
    name = "<ipython-input-7-0123456789ab>"
    cell = textwrap.dedent("""
        x = tf.Variable(2.0)
        with tf.GradientTape() as tape:
            y = x ** 3
        result = tape.gradient(y, x)
        """)
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    namespace = {"tf": tf}
    exec(compile(cell, name, "exec"), namespace)
    assert namespace["result"] == 12.0


def test_variable_behaves_like_its_value():
    v = tf.Variable([1.0, 2.0], name="v")
    assert isinstance(v + 1, np.ndarray) and np.sum(v) == 3.0 and v.shape == (2,)
    v.assign([3.0, 4.0])
    v.assign_add([1.0, 1.0])
    v.assign_sub([0.5, 0.5])
    np.testing.assert_array_equal(v.numpy(), [3.5, 4.5])
    assert v.name == "v:0" and v.dtype == np.float64
    with pytest.raises(ValueError, match="shape"):
        v.assign([1.0, 2.0, 3.0])


def test_integers_are_never_watched():
    n = 3
    with tf.GradientTape() as tape:
        tape.watch(n)
        y = n * 2.0
    assert tape.gradient(y, n) is None


def test_running_mean():
    mean = tf.metrics.Mean()
    assert mean(2.0) == 2.0
    assert mean.update_state([4.0, 6.0]) == 4.0
    assert mean.result() == 4.0
    mean.reset_state()
    assert mean.result() == 0.0


# ---- errors, in TensorFlow's words --------------------------------------------------------

def test_second_gradient_on_a_non_persistent_tape():
    x = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        y = x * x
    tape.gradient(y, x)
    with pytest.raises(RuntimeError, match="non-persistent GradientTape can only be used to "
                                           "compute one set of gradients"):
        tape.gradient(y, x)


def test_reentering_an_active_tape():
    tape = tf.GradientTape()
    with tape:
        with pytest.raises(ValueError, match="re-enter an already-active tape"):
            with tape:
                pass


def test_reset_and_stop_recording_outside_the_block():
    tape = tf.GradientTape()
    with tape:
        y = 1.0
    with pytest.raises(ValueError, match="Tape is not recording"):
        tape.reset()
    with pytest.raises(RuntimeError, match="stop recording a tape which is not recording"):
        tape.stop_recording()
    assert y == 1.0


def test_bad_unconnected_gradients_and_none_target():
    x = tf.Variable(1.0)
    with tf.GradientTape(persistent=True) as tape:
        y = x * x
    with pytest.raises(ValueError, match="'nothing' is not a valid UnconnectedGradients"):
        tape.gradient(y, x, unconnected_gradients="nothing")
    with pytest.raises(TypeError, match="received None"):
        tape.gradient(None, x)


def test_no_source_points_to_grad():
    code = ("import srcgrad\nx = srcgrad.Variable(1.0)\n"
            "with srcgrad.GradientTape() as t:\n    y = x * x\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode != 0
    assert "cannot read the source" in run.stderr and "srcgrad.grad" in run.stderr


W_MODULE = tf.Variable(np.array([[0.5, -1.0]]), name="W_module")
B_FROZEN = tf.Variable(np.array([0.1, 0.2]), name="b_frozen", trainable=False)


def module_model(x):
    return np.tanh(x @ W_MODULE + B_FROZEN)


def test_variables_read_by_called_functions_are_watched():
    x = np.array([[1.0], [2.0]])
    with tf.GradientTape() as tape:
        loss = np.sum(module_model(x) ** 2)
    g_w, g_b = tape.gradient(loss, [W_MODULE, B_FROZEN])
    y = np.tanh(x @ W_MODULE.numpy() + B_FROZEN.numpy())
    np.testing.assert_allclose(g_w, x.T @ (2 * y * (1 - y ** 2)), rtol=1e-12)
    assert g_b is None  # not trainable, not watched
    assert [v.name for v in tape.watched_variables()] == ["W_module:0"]


A_WATCHED = np.array([1.0, 2.0])


def reads_module_values(x):
    return x @ W_MODULE[0] + x @ A_WATCHED


def test_a_variable_read_by_a_call_and_by_the_block_gets_both_terms():
    """The model reads W from its module, the block's L2 penalty reads it too: the gradient
    by the Variable is the sum of both (it was the penalty's alone), for a watched array
    alike."""
    x = np.array([3.0, 4.0])
    with tf.GradientTape() as tape:
        tape.watch(A_WATCHED)
        loss = reads_module_values(x) + 0.5 * np.sum(W_MODULE ** 2) + np.sum(A_WATCHED ** 2)
    g_w, g_a = tape.gradient(loss, [W_MODULE, A_WATCHED])
    np.testing.assert_allclose(g_w, x[None, :] + W_MODULE.numpy(), rtol=1e-12)
    np.testing.assert_allclose(g_a, x + 2 * A_WATCHED, rtol=1e-12)


class _Scale:  # a Keras-style layer holding its Variable
    def __init__(self):
        self.w = tf.Variable(np.array([1.0, 2.0]), name="scale_w")

    def __call__(self, x):
        return x * self.w


def test_a_variable_read_inside_a_list_or_an_object_is_an_error():
    """The block's function takes lists as arrays and objects not at all: a Variable read
    inside one (`variables[k]`, `layer.w`) would lose those terms; an error says so."""
    w1 = tf.Variable(np.array([1.0, 2.0]), name="w1")
    w2 = tf.Variable(np.array([3.0, -1.0]), name="w2")
    variables = [w1, w2]
    x = np.array([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = np.sum(x * w1 * w2) + 0.5 * sum(np.sum(v ** 2) for v in variables)
    with pytest.raises(srcgrad.SrcgradError, match=r"'w1:0'.* inside `variables\[0\]`"):
        tape.gradient(loss, variables)
    layer = _Scale()
    with tf.GradientTape() as tape:
        loss = np.sum(layer(x) ** 2)
    with pytest.raises(srcgrad.SrcgradError, match=r"inside `layer\.w`"):
        tape.gradient(loss, layer.w)


def test_a_list_of_arrays_of_different_shapes_is_read():
    w = tf.Variable(np.ones((2, 3)), name="w_ragged")
    constants = [np.ones(2), np.ones(3)]
    x = np.array([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = np.sum(x @ w) + np.sum(constants[0] * x)
    np.testing.assert_allclose(tape.gradient(loss, w), np.outer(x, np.ones(3)))


def test_tied_weights_read_under_two_names_sum_their_gradients():
    W = tf.Variable(np.array([[0.5, -0.2], [0.1, 0.3]]), name="W_tied")
    W_dec = W  # the decoder reuses the encoder's Variable
    x = np.array([1.0, 2.0])
    with tf.GradientTape() as tape:
        loss = np.sum((W_dec.T @ np.tanh(W @ x) - x) ** 2)
    h = np.tanh(W.numpy() @ x)
    r = W.numpy().T @ h - x
    expected = np.outer(h, 2 * r) + np.outer((W.numpy() @ (2 * r)) * (1 - h ** 2), x)
    np.testing.assert_allclose(tape.gradient(loss, W), expected, rtol=1e-12)
    c = np.array([1.0, 2.0])
    alias = c
    with tf.GradientTape() as tape:
        tape.watch(c)
        y = np.sum(alias * c)
    np.testing.assert_allclose(tape.gradient(y, c), [2.0, 4.0])


_RNG = np.random.default_rng(7)


def test_a_dropout_mask_drawn_in_the_block_is_the_one_differentiated():
    w = tf.Variable(np.ones(6), name="w_dropout")
    for _ in range(3):
        with tf.GradientTape() as tape:
            mask = _RNG.uniform(size=6) > 0.5
            loss = np.sum(w * w * mask)
        np.testing.assert_array_equal(tape.gradient(loss, w), 2.0 * mask)
    again = np.random.default_rng(7)
    for _ in range(3):
        again.uniform(size=6)
    assert _RNG.uniform() == again.uniform()  # the gradients drew nothing of the caller's


def test_numpy_global_draws_in_a_block_are_refused():
    w = tf.Variable(np.ones(6), name="w_global_draw")
    with tf.GradientTape() as tape:
        mask = np.random.uniform(size=6) > 0.5
        loss = np.sum(w * mask)
    with pytest.raises(srcgrad.SrcgradError, match=r"np\.random\.uniform.*Generator"):
        tape.gradient(loss, w)


def test_nested_tapes_with_two_inner_gradients_differentiate_the_one_used():
    a = tf.Variable(np.array([0.5, -0.3]), name="a_nested2")
    b = tf.Variable(1.2, name="b_nested2")
    with tf.GradientTape(persistent=True) as outer:
        with tf.GradientTape(persistent=True) as inner:
            y = np.sum(a ** 2) * b ** 3
        ga = inner.gradient(y, a)
        gb = inner.gradient(y, b)  # noqa: F841  (the later call must not stand for ga)
        s = np.sum(ga)
    assert np.isclose(outer.gradient(s, b), 6 * 1.2 ** 2 * np.sum(a.numpy()), rtol=1e-12)
    np.testing.assert_allclose(outer.gradient(s, a), 2 * 1.2 ** 3 * np.ones(2), rtol=1e-12)


_HISTORY = []


def test_lists_the_block_appends_to_and_variables_it_makes():
    W = tf.Variable(np.array([1.0, 2.0]), name="W_lists")
    with tf.GradientTape() as tape:
        losses = []
        for p in (2, 3):
            losses.append(np.sum(W ** p))
        total = sum(losses)
        _HISTORY.append(total)  # a list of the caller's, kept a list
    np.testing.assert_allclose(tape.gradient(total, W), [5.0, 16.0])
    assert len(_HISTORY) == 1
    with tf.GradientTape() as tape:
        V = tf.Variable(np.array([3.0]), name="V_made")  # made in the block: watched, as in TF
        loss = np.sum(V ** 2 * W)
    gv, gw = tape.gradient(loss, [V, W])
    np.testing.assert_allclose(gv, [18.0])
    np.testing.assert_allclose(gw, [9.0, 9.0])


def test_training_loop_example_runs():
    run = subprocess.run([sys.executable, "examples/training_loop.py"], capture_output=True,
                         text=True, cwd=__file__.rsplit("/tests/", 1)[0])
    assert run.returncode == 0, run.stderr
    losses = [float(line.split("mean loss ")[1]) for line in run.stdout.splitlines()
              if line.startswith("epoch")]
    assert len(losses) == 10 and losses[-1] < losses[0] / 10
