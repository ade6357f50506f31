"""Object-oriented programs written the way researchers write them - models holding weights in
attributes, layers in lists and dicts, optimizers and schedulers stepped by a driver,
simulations of particles, accounts and queues whose methods mutate `self` - then converted
with `@ag.convert` (or `ag.convert(obj.method)`).

The reference is the same Python run eagerly. With tensor arguments (`tensors=True`) the
plain run gets numpy values (Python ints become int32, floats float32, bools bool, lists
arrays of those) and the converted run `rt.constant` of the same values, so dtypes must
agree too; with Python arguments both runs get the Python values (the trace specializes on
them) and a Python number in the reference must come back as a number of the same kind.
Printed text must be exactly equal. `fresh(make)` builds an argument anew for every run
(`make(value)` converts the numbers it is given the way the run's arguments are converted),
so an object mutated by one run never reaches another; `py(v)` stays a Python value in
every run. Every converted run has a loop iteration limit: a runaway graph loop fails
instead of hanging.

Bugs found are strict xfails whose reason gives the diagnosis; the reduced reproductions
are at the end of the file. What a called method assigns on `self`, or on any object the
loop or branch reaches (a callable object, a receiver that is an attribute, item or loop
target, an object passed to a helper or closed over, state read only by methods), is
state the operators discover (autograph/operators/state.py). A Python object that would
differ between the branches of a tensor `if` or across iterations of a tensor loop is a
StagingError naming it (tested as such).
"""
import collections
import contextlib
import dataclasses
import functools
import io

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from equivalence import assert_equivalent, assert_same


# -- the check ---------------------------------------------------------------------------------

class py:
    """An argument that stays a Python value in every run."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"py({self.value!r})"


class fresh:
    """An argument built anew for every run: `make(value)` gets the run's converter for
    numbers (numpy scalars/arrays for the reference, `rt.constant` for the converted run
    with tensor arguments, the identity with Python arguments)."""

    def __init__(self, make):
        self.make = make

    def __repr__(self):
        return "fresh(...)"


_DTYPES = {bool: np.bool_, int: np.int32, float: np.float32}


def _as_numpy(value):
    if isinstance(value, (bool, int, float)):
        return _DTYPES[type(value)](value)
    if isinstance(value, list) and value:
        array = np.asarray(value)
        if array.dtype.kind in "biuf":
            kind = bool if array.dtype.kind == "b" else \
                float if array.dtype.kind == "f" else int
            return np.array(value, _DTYPES[kind])
    return value


def _converter(tensors, reference):
    def convert(value):
        if not tensors:
            return value
        value = _as_numpy(value)
        if reference or not isinstance(value, (np.generic, np.ndarray)):
            return value
        return rt.constant(value)
    return convert


def _arguments(args, tensors, reference):
    convert = _converter(tensors, reference)
    out = []
    for a in args:
        if isinstance(a, py):
            out.append(a.value)
        elif isinstance(a, fresh):
            out.append(a.make(convert))
        else:
            out.append(convert(a))
    return out


LOOP_LIMIT = 10_000         # far above any loop here: a runaway graph loop fails instead


# Floats: one tolerance whatever the dtype (the programs here are short).
assert_same = functools.partial(assert_same, tol=(2e-6, 1e-6))


def _run(fn, args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), rt.config.options(loop_iteration_limit=LOOP_LIMIT):
        result = fn(*args)
    return result, out.getvalue()


def check(f, *args, tensors, raises=None, match=None):
    """Run `f` eagerly on the reference arguments and `ag.convert(f)` on the converted ones:
    same results (values, dtypes, structure) and the same printed text. `f` may also be a
    `method(name)`: the method of the run's first argument (a fresh object).

    `raises`: both runs must raise this class (message matching `match`) after printing
    the same text. Returns the reference result."""
    outcomes = []
    for reference in (True, False):
        call_args = _arguments(args, tensors, reference)
        fn = f(call_args) if isinstance(f, method) else f
        if isinstance(f, method):
            call_args = call_args[1:]
        if not reference:
            fn = ag.convert(fn)
        if raises is not None:
            out = io.StringIO()
            with pytest.raises(raises, match=match), contextlib.redirect_stdout(out), \
                    rt.config.options(loop_iteration_limit=LOOP_LIMIT):
                fn(*call_args)
            outcomes.append((None, out.getvalue()))
        else:
            outcomes.append(_run(fn, call_args))
    (expected, expected_text), (actual, actual_text) = outcomes
    assert actual_text == expected_text, \
        f"printed text differs:\n--- plain\n{expected_text}--- converted\n{actual_text}"
    if raises is None:
        assert_same(expected, actual)
    return expected


class method:
    """`check(method("step"), fresh(make_obj), *args)`: convert the bound method `obj.step`
    of the run's fresh object, as `ag.convert(obj.step)`; `method(pick)` converts
    `pick(obj)` (`method(lambda obj: obj)` a callable object itself)."""

    def __init__(self, name):
        self.name = name

    def __call__(self, call_args):
        if callable(self.name):
            return self.name(call_args[0])
        return getattr(call_args[0], self.name)


def modes(python_bug=None, tensor_bug=None):
    """Parametrize `tensors` over both modes, a known bug in one of them a strict xfail."""
    def param(value, name, bug):
        marks = pytest.mark.xfail(strict=True, reason=bug) if bug else ()
        return pytest.param(value, id=name, marks=marks)
    return pytest.mark.parametrize("tensors", [param(False, "python", python_bug),
                                               param(True, "tensor", tensor_bug)])


def both(*values, python_bug=None, tensor_bug=None):
    """Two parameter sets, `values` with Python and with tensor arguments (for a
    parametrize over "..., tensors"), a known bug in either a strict xfail."""
    out = []
    for tensors, name, bug in ((False, "python", python_bug), (True, "tensor", tensor_bug)):
        marks = pytest.mark.xfail(strict=True, reason=bug) if bug else ()
        out.append(pytest.param(*values, tensors, marks=marks,
                                id="-".join(map(str, values + (name,)))))
    return out


def staging_error(f, *args, names=(), line=None, tensors=True):
    """`ag.convert(f)` (on tensor arguments unless `tensors=False`) raises a StagingError
    naming `names` and the user's `line`."""
    call_args = _arguments(args, tensors, False)
    with pytest.raises(ag.StagingError) as info, \
            rt.config.options(loop_iteration_limit=LOOP_LIMIT):
        ag.convert(f)(*call_args)
    message = str(info.value)
    for name in names:
        assert name in message, message
    if line is not None:
        assert line in message, message
    return message


# One-line diagnoses of the bugs found (reduced reproductions at the end of the file).

# == models holding weights ======================================================================

class Dense:
    """A layer with its weights in rt.Variables and an optional activation."""

    def __init__(self, w, b, activation=None):
        self.w = rt.Variable(w)
        self.b = rt.Variable(b)
        self.activation = activation

    def __call__(self, x):
        y = rt.matmul(x, self.w) + self.b
        if self.activation is not None:
            y = self.activation(y)
        return y


class Sequential:
    def __init__(self, *layers):
        self.layers = list(layers)

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class FixedPointSolver:
    """Iterates a model to its fixed point: x <- model(x) until the step is small."""

    def __init__(self, model, tol, max_iter):
        self.model = model
        self.tol = tol
        self.max_iter = max_iter
        self.iterations = 0

    def solve(self, x):
        delta = rt.reduce_max(rt.abs(self.model(x) - x))
        while delta > self.tol and self.iterations < self.max_iter:
            x_new = self.model(x)
            delta = rt.reduce_max(rt.abs(x_new - x))
            x = x_new
            self.iterations += 1
        return x, self.iterations


def contraction_model():
    w = np.array([[0.5, 0.1], [0.0, 0.4]], np.float32)
    return Sequential(Dense(w, np.array([1.0, -1.0], np.float32), rt.tanh),
                      Dense(np.eye(2, dtype=np.float32), np.zeros(2, np.float32)))


_CONTRACTION = contraction_model()     # made once: a graph function creates no variables
                                        # after its first call (tf.function's rule)


def solve_fixed_point(x, tol, max_iter):
    solver = FixedPointSolver(_CONTRACTION, tol, max_iter)
    fixed, iterations = solver.solve(x)
    return fixed, iterations, solver.iterations


@pytest.mark.parametrize("x, tol, max_iter, tensors", [
    *both([[0.0, 0.0]], 1e-5, 50),
    *both([[3.0, -2.0]], 1e-3, 50),
    *both([[0.0, 0.0]], 1e-5, 2),            # stops at max_iter
    ([[0.0, 0.0]], 1e-5, 0, True),          # no iteration
])
def test_fixed_point_of_a_sequential_model(x, tol, max_iter, tensors):
    check(solve_fixed_point, x, tol, max_iter, tensors=tensors)


def test_a_list_a_tensor_loop_replaces_by_a_tensor_is_a_tensor_after_the_loop():
    # A limit of graph loops: the loop turns the Python list `x` into a tensor (`x =
    # model(x)`) and carries that; after zero iterations it is that tensor too, where
    # eagerly it is still the list. The values are the list's.
    fixed, iterations, solver_iterations = ag.convert(solve_fixed_point)([[0.0, 0.0]], 1e-5, 0)
    assert isinstance(fixed, rt.Tensor) and fixed.numpy().tolist() == [[0.0, 0.0]]
    assert int(iterations) == int(solver_iterations) == 0


class ClippedHead:
    """Scales its output down when its total exceeds a limit held in an attribute."""

    def __init__(self, limit):
        self.limit = limit
        self.clipped = 0

    def forward(self, h):
        total = rt.reduce_sum(h)
        if total > self.limit:
            h = h * (self.limit / total)
            self.clipped += 1
        return h


class TwoHeadModel:
    """Sub-objects kept in a dict, iterated in a loop, the better head chosen by a tensor."""

    def __init__(self, limit):
        self.heads = {"mean": ClippedHead(limit), "peak": ClippedHead(limit * 2.0)}

    def forward(self, x):
        outputs = {}
        for name, head in self.heads.items():
            outputs[name] = head.forward(x)
        score_mean = rt.reduce_mean(outputs["mean"])
        score_peak = rt.reduce_max(outputs["peak"])
        if score_mean >= score_peak:
            best = outputs["mean"]
        else:
            best = outputs["peak"]
        return best, outputs, self.heads["mean"].clipped + self.heads["peak"].clipped


def two_head_scores(x, limit):
    model = TwoHeadModel(limit)
    x = rt.convert_to_tensor(x, rt.float32)
    best, outputs, clipped = model.forward(x)
    return best, outputs["mean"], outputs["peak"], clipped, model.heads["peak"].clipped


@pytest.mark.parametrize("x, limit", [
    ([1.0, 2.0, 3.0], 10.0),            # nothing clipped
    ([1.0, 2.0, 3.0], 4.0),             # the mean head clipped
    ([1.0, 2.0, 3.0], 2.0),             # both clipped
    ([-5.0, 1.0, 1.0], 1.0),
])
def test_heads_in_a_dict_of_sub_objects(x, limit, tensors):
    check(two_head_scores, x, limit, tensors=tensors)


# == optimizers, schedulers and callbacks stepped by a driver loop ===============================

class StepDecay:
    """Halves the learning rate every `every` epochs."""

    def __init__(self, lr, every, factor):
        self.lr = lr
        self.every = every
        self.factor = factor
        self.epoch = 0

    def step(self):
        self.epoch += 1
        if self.epoch % self.every == 0:
            self.lr = self.lr * self.factor


class MomentumSGD:
    def __init__(self, scheduler, momentum):
        self.scheduler = scheduler
        self.momentum = momentum
        self.velocity = 0.0
        self.updates = 0

    def step(self, w, grad):
        self.velocity = self.momentum * self.velocity - self.scheduler.lr * grad
        self.updates += 1
        return w + self.velocity


def fit_quadratic(w, target, epochs):
    scheduler = StepDecay(0.2, 3, 0.5)
    opt = MomentumSGD(scheduler, 0.5)
    for _ in range(epochs):
        grad = 2.0 * (w - target)
        w = opt.step(w, grad)
        scheduler.step()
    return w, scheduler.lr, scheduler.epoch, opt.updates, opt.velocity


@pytest.mark.parametrize("w, target, epochs", [
    (0.0, 3.0, 10), (5.0, -1.0, 4), (1.0, 1.0, 1),
    (2.0, 0.0, 0),                              # no epoch: the scheduler as it was built
])
def test_momentum_optimizer_with_a_step_decay_scheduler(w, target, epochs, tensors):
    check(fit_quadratic, w, target, epochs, tensors=tensors)


class Experiment:
    """The same training as fit_quadratic, organized as an object holding its optimizer and
    scheduler: run() steps them through attributes (`self.scheduler.step()`)."""

    def __init__(self, target):
        self.target = target
        self.scheduler = StepDecay(0.2, 3, 0.5)
        self.optimizer = MomentumSGD(self.scheduler, 0.5)

    def run(self, w, epochs):
        for _ in range(epochs):
            w = self.optimizer.step(w, 2.0 * (w - self.target))
            self.scheduler.step()
        return w, self.scheduler.lr, self.scheduler.epoch, self.optimizer.updates


def run_experiment(w, target, epochs):
    return Experiment(target).run(w, epochs)


@pytest.mark.parametrize("w, target, epochs, tensors", [
    *both(0.0, 3.0, 10), *both(5.0, -1.0, 4),
    *both(2.0, 0.0, 0),                         # no epoch: the loop's values never escape
])
def test_an_experiment_stepping_its_optimizer_and_scheduler_attributes(w, target, epochs,
                                                                         tensors):
    check(run_experiment, w, target, epochs, tensors=tensors)


class EarlyStopping:
    def __init__(self, patience, min_delta):
        self.patience = patience
        self.min_delta = min_delta
        self.best = float("inf")
        self.wait = 0
        self.stopped_epoch = -1

    def __call__(self, epoch, loss):
        if loss < self.best - self.min_delta:
            self.best = loss
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = epoch
                return True
        return False


def train_with_early_stopping(losses, patience):
    stopper = EarlyStopping(patience, 0.01)
    for epoch, loss in enumerate(losses):
        if stopper(epoch, loss):
            print(f"stopping at epoch {epoch}: best {stopper.best:.3f}, waited {stopper.wait}")
            break
    return stopper.best, stopper.wait, stopper.stopped_epoch


@modes()
@pytest.mark.parametrize("losses, patience", [
    ([1.0, 0.8, 0.79, 0.795, 0.9, 0.5], 2),        # stops at epoch 4
    ([1.0, 0.8, 0.6, 0.4], 2),                     # never stops
    ([1.0, 1.0, 1.0, 1.0], 1),                     # stops at once after the first
    ([3.0], 1),
])
def test_early_stopping_callback_breaks_the_epoch_loop(losses, patience, tensors):
    check(train_with_early_stopping, losses, patience, tensors=tensors)


class Trainer:
    """A model with rt.Variable weights trained by a tape inside its own method; the driver
    loop stops once the loss is small."""

    def __init__(self, lr):
        self.w = rt.Variable(np.zeros([2], np.float32), name="w")
        self.b = rt.Variable(np.float32(0.0), name="b")
        self.lr = lr
        self.history = []

    def predict(self, x):
        return rt.reduce_sum(x * self.w, axis=1) + self.b

    def train_step(self, x, y):
        with rt.GradientTape() as tape:
            loss = rt.reduce_mean(rt.square(self.predict(x) - y))
        gw, gb = tape.gradient(loss, [self.w, self.b])
        self.w.assign_sub(self.lr * gw)
        self.b.assign_sub(self.lr * gb)
        return loss


def fit_until(trainer, x, y, max_epochs, tol):
    epoch = 0
    loss = trainer.train_step(x, y)
    while loss > tol and epoch < max_epochs:
        loss = trainer.train_step(x, y)
        epoch += 1
    return loss, epoch, trainer.w.read_value(), trainer.b.read_value()


@pytest.mark.parametrize("max_epochs, tol", [(200, 1e-3), (5, 1e-3), (0, 1e-3), (100, 10.0)])
def test_trainer_method_with_a_tape_in_a_driver_loop(max_epochs, tol, tensors):
    x = [[1.0, 2.0], [2.0, 0.5], [0.0, 1.0], [1.5, 1.5]]
    y = [5.0, 3.5, 2.0, 5.5]
    check(fit_until, fresh(lambda v: Trainer(0.05)), x, y, max_epochs, tol, tensors=tensors)


# == simulations: objects whose methods mutate self ==============================================

class Particle:
    def __init__(self, x, v):
        self.x = x
        self.v = v
        self.bounces = 0

    def step(self, dt, wall):
        self.x = self.x + self.v * dt
        if self.x > wall:
            self.x = 2.0 * wall - self.x
            self.v = -self.v
            self.bounces += 1
        elif self.x < 0.0:
            self.x = -self.x
            self.v = -self.v
            self.bounces += 1


class Box:
    def __init__(self, particles, wall):
        self.particles = particles
        self.wall = wall
        self.time = 0.0

    def run(self, steps, dt):
        t = 0
        while t < steps:
            for p in self.particles:
                p.step(dt, self.wall)
            self.time = self.time + dt
            t += 1
        return [(p.x, p.v, p.bounces) for p in self.particles]


def particles_in_a_box(x0, x1, v0, v1, steps):
    box = Box([Particle(x0, v0), Particle(x1, v1)], 1.0)
    states = box.run(steps, 0.3)
    return states, box.time


@modes()
@pytest.mark.parametrize("x0, x1, v0, v1, steps", [
    (0.5, 0.2, 1.0, -0.5, 7), (0.1, 0.9, 0.0, 2.0, 3), (0.5, 0.5, 1.0, 1.0, 0),
])
def test_particles_in_a_box(x0, x1, v0, v1, steps, tensors):
    check(particles_in_a_box, x0, x1, v0, v1, steps, tensors=tensors)


class Account:
    def __init__(self, owner, balance):
        self.owner = owner
        self.balance = balance
        self.rejected = 0

    def deposit(self, amount):
        self.balance = self.balance + amount

    def withdraw(self, amount):
        if amount > self.balance:
            self.rejected += 1
            return False
        self.balance = self.balance - amount
        return True

    def transfer(self, other, amount):
        if self.withdraw(amount):
            other.deposit(amount)
            return True
        return False


def ledger(amounts, start):
    alice = Account("alice", start)
    bob = Account("bob", 0.0)
    moved = 0
    for amount in amounts:
        if alice.transfer(bob, amount):
            moved += 1
        else:
            print(f"{alice.owner} cannot send {amount:.2f} to {bob.owner}: "
                  f"has {alice.balance:.2f}")
    return alice.balance, bob.balance, alice.rejected, moved


@modes()
@pytest.mark.parametrize("amounts, start", [
    ([10.0, 50.0, 30.0, 20.0], 70.0), ([5.0, 5.0], 100.0), ([80.0], 10.0),
])
def test_transfers_between_accounts_with_nested_method_calls(amounts, start, tensors):
    check(ledger, amounts, start, tensors=tensors)


class Histogram:
    """Counts in a dict attribute, keyed by bin; `add` returns early from a Python loop over
    the edges."""

    def __init__(self, edges):
        self.edges = edges
        self.counts = {k: 0 for k in range(len(edges) + 1)}

    def add(self, x):
        for k, edge in enumerate(self.edges):
            if x < edge:
                self.counts[k] += 1
                return k
        self.counts[len(self.edges)] += 1
        return len(self.edges)


def histogram_of(values):
    hist = Histogram([0.0, 1.0, 2.5])
    last_bin = -1
    for v in values:
        last_bin = hist.add(v)
    return hist.counts, last_bin


@pytest.mark.parametrize("values", [[-1.0, 0.5, 0.7, 3.0, 2.0, 9.0], [5.0], [0.0, 0.0, -3.0]])
def test_histogram_counts_in_a_dict_attribute(values, tensors):
    check(histogram_of, values, tensors=tensors)


class Thermostat:
    """A property with a setter that clips, read in the loop condition."""

    def __init__(self, temp, target):
        self._temp = temp
        self.target = target
        self.heating_steps = 0

    @property
    def temp(self):
        return self._temp

    @temp.setter
    def temp(self, value):
        self._temp = rt.clip_by_value(value, -20.0, 30.0)

    @property
    def too_cold(self):
        return self.temp < self.target

    def regulate(self, max_steps):
        while self.too_cold and self.heating_steps < max_steps:
            self.temp = self.temp + 1.5
            self.heating_steps += 1
        return self.temp


def heat_room(temp, target, max_steps):
    room = Thermostat(temp, target)
    final = room.regulate(max_steps)
    return final, room.temp, room.heating_steps


@pytest.mark.parametrize("temp, target, max_steps", [
    (15.0, 20.0, 100), (15.0, 40.0, 100), (25.0, 20.0, 100), (10.0, 20.0, 3),
])
def test_thermostat_properties_in_the_loop_condition(temp, target, max_steps, tensors):
    check(heat_room, temp, target, max_steps, tensors=tensors)


# == inheritance, super(), classmethods and staticmethods =========================================

class Layer:
    def __init__(self, scale):
        self.scale = scale
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return x * self.scale


class SoftClip(Layer):
    """Scales like its base class, then compresses what lies above a limit."""

    def __init__(self, scale, limit):
        super().__init__(scale)
        self.limit = limit

    def forward(self, x):
        y = super().forward(x)
        if y > self.limit:
            y = self.limit + (y - self.limit) * 0.1
        return y


class Residual(SoftClip):
    def forward(self, x):
        return x + super().forward(x)


def stacked_layers(x, depth):
    layers = [Layer(0.5), SoftClip(3.0, 2.0), Residual(2.0, 1.0)]
    for _ in range(depth):
        for layer in layers:
            x = layer.forward(x)
    return x, [layer.calls for layer in layers]


@pytest.mark.parametrize("x, depth", [(1.0, 1), (4.0, 2), (-3.0, 3), (0.5, 0)])
def test_inheritance_and_super_in_layers(x, depth, tensors):
    check(stacked_layers, x, py(depth), tensors=tensors)


@modes()
@pytest.mark.parametrize("x, depth", [(1.0, 2), (4.0, 3)])     # (right after one iteration)
def test_inheritance_and_super_in_layers_with_a_tensor_depth(x, depth, tensors):
    check(stacked_layers, x, depth, tensors=tensors)


class Vec2:
    """A small vector class: operators, a classmethod constructor, a staticmethod helper."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    @classmethod
    def polar(cls, r, cos_a, sin_a):
        return cls(r * cos_a, r * sin_a)

    @staticmethod
    def dot(a, b):
        return a.x * b.x + a.y * b.y

    def __add__(self, other):
        return Vec2(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vec2(self.x * k, self.y * k)

    __rmul__ = __mul__

    def norm2(self):
        return Vec2.dot(self, self)


def leash_walk(steps, r):
    """A walker pulled back to the origin whenever it strays past radius r. The position is
    kept as two numbers across the loop and the `if` (a Vec2 cannot be graph state)."""
    px, py_ = 0.0, 0.0
    pulls = 0
    for i in range(steps):
        if i % 2 == 0:
            r_step, cos_a, sin_a = 0.75, 0.6, 0.8
        else:
            r_step, cos_a, sin_a = 0.5, -0.8, 0.6
        step = Vec2.polar(r_step, cos_a, sin_a)
        pos = Vec2(px, py_) + 1.5 * step
        if pos.norm2() > r * r:
            half = pos * 0.5
            px, py_ = half.x, half.y
            pulls += 1
        else:
            px, py_ = pos.x, pos.y
    return px, py_, pulls


@pytest.mark.parametrize("steps, r", [(10, 2.0), (5, 100.0), (0, 1.0), (7, 0.5)])
def test_classmethod_and_staticmethod_of_a_vector_class(steps, r, tensors):
    check(leash_walk, steps, r, tensors=tensors)


def walk_with_a_vector_as_loop_state(steps):
    pos = Vec2(0.0, 0.0)
    for _ in range(steps):
        pos = pos + Vec2(1.0, 0.5)
    return pos.x, pos.y


def test_a_user_object_reassigned_in_a_tensor_loop_is_a_staging_error():
    # A graph loop can only carry tensors: the error names the variable and the loop's line.
    check(walk_with_a_vector_as_loop_state, 3, tensors=False)
    staging_error(walk_with_a_vector_as_loop_state, 3, names=["'pos'", "Vec2"],
                  line="for _ in range(steps):")


# == dataclasses and namedtuples returned from methods =============================================

Peak = collections.namedtuple("Peak", "index value prominence")


@dataclasses.dataclass
class Summary:
    count: object
    mean: object
    peak: Peak


class PeakDetector:
    def __init__(self, threshold):
        self.threshold = threshold

    def first_peak(self, signal):
        for i in range(1, len(signal) - 1):
            left, here, right = signal[i - 1], signal[i], signal[i + 1]
            if here > left and here > right and here > self.threshold:
                return Peak(i, here, here - rt.maximum(left, right))
        return Peak(-1, signal[0] * 0.0, signal[0] * 0.0)

    def summarize(self, signal):
        total = 0.0
        above = 0
        for x in signal:
            if x > self.threshold:
                above += 1
                total += x
        mean = total / above if above > 0 else total * 0.0
        return Summary(above, mean, self.first_peak(signal))


def summarize_signal(signal, threshold):
    summary = PeakDetector(threshold).summarize(signal)
    return summary.count, summary.mean, summary.peak


def signal_summary(signal, threshold):
    return PeakDetector(threshold).summarize(signal)


@pytest.mark.parametrize("signal, threshold", [
    ([0.0, 1.0, 3.0, 2.0, 5.0, 1.0], 2.5),
    ([0.0, 1.0, 3.0, 2.0, 5.0, 1.0], 0.5),
    ([1.0, 1.0, 1.0], 0.0),                 # no peak
    ([5.0, 4.0, 3.0, 2.0], 10.0),           # nothing above
])
def test_dataclass_and_namedtuple_from_methods(signal, threshold, tensors):
    check(summarize_signal, signal, threshold, tensors=tensors)


def test_a_dataclass_returned_by_the_converted_function():
    check(signal_summary, [0.0, 1.0, 3.0, 2.0, 5.0, 1.0], 2.5, tensors=True)


@dataclasses.dataclass(frozen=True)
class Reading:
    value: object
    unit: str = "m"
    scaled: object = dataclasses.field(default=None, init=False)


def reading_from_a_branch(x):
    if x > 0.0:
        r = Reading(x * 2.0, "km")
    else:
        r = Reading(-x, "km")
    return {"reading": r, "history": [r.value + 1.0, Reading(r.value * 3.0)]}


@dataclasses.dataclass
class Pair:
    low: object
    high: object


def pair_carried_by_a_loop(x, n):
    p = Pair(x, x)                # (a dataclass of tensors and numbers only, like a tuple)
    i = 0
    while i < n:
        p = Pair(p.low - 1.0, p.high * 2.0)
        i += 1
    return p


@pytest.mark.parametrize("x", [1.5, -1.5])
def test_a_frozen_dataclass_from_a_branch_inside_a_dict_and_a_list(x, tensors):
    result = check(reading_from_a_branch, x, tensors=tensors)
    assert type(result["history"][1]) is Reading


@pytest.mark.parametrize("n", [0, 3])
def test_a_dataclass_carried_by_a_loop_and_returned(n, tensors):
    check(pair_carried_by_a_loop, 1.0, n, tensors=tensors)


def test_a_dataclass_from_rt_function_keeps_its_python_fields():
    r = rt.function(lambda x: Reading(x + 1.0, "cm"))(rt.constant(1.0))
    assert type(r) is Reading and r.unit == "cm" and r.scaled is None
    assert r.value.numpy() == 2.0


# == user sequences: __len__ and __getitem__ =======================================================

class Trajectory:
    """Points of a path, indexed like a list; `length()` walks it."""

    def __init__(self, xs, ys):
        self.xs = xs
        self.ys = ys

    def __len__(self):
        return len(self.xs)

    def __getitem__(self, i):
        return self.xs[i], self.ys[i]

    def length(self):
        total = 0.0
        for i in range(1, len(self)):
            x0, y0 = self[i - 1]
            x1, y1 = self[i]
            total += rt.sqrt((x1 - x0) ** 2 + (y1 - y0) ** 2)
        return total

    def first_far_point(self, radius):
        i = 0
        while i < len(self):
            x, y = self[i]
            if x * x + y * y > radius * radius:
                return i
            i += 1
        return -1


def trajectory_stats(xs, ys, radius):
    path = Trajectory(xs, ys)
    return path.length(), path.first_far_point(radius), len(path)


@pytest.mark.parametrize("xs, ys, radius", [
    ([0.0, 3.0, 3.0, 0.0], [0.0, 4.0, 0.0, 0.0], 4.0),
    ([0.0, 1.0], [0.0, 1.0], 10.0),             # never far: -1
    ([5.0], [5.0], 1.0),                        # one point: no segment
])
def test_user_sequence_with_len_and_getitem(xs, ys, radius, tensors):
    check(trajectory_stats, xs, ys, radius, tensors=tensors)


# == callable objects, closures, objects made inside or passed in ================================

class Relu:
    def __call__(self, x):
        return rt.maximum(x, 0.0)


class LeakyRelu:
    def __init__(self, slope):
        self.slope = slope

    def __call__(self, x):
        x = rt.convert_to_tensor(x)
        return rt.where(x > 0.0, x, x * self.slope)


class Tanh:
    def __call__(self, x):
        return rt.tanh(x)


ACTIVATIONS = {"relu": Relu(), "leaky": LeakyRelu(0.1), "tanh": Tanh()}


def gated_activation(x, gate, name):
    """The registry entry named by a Python string, or tanh, chosen by a tensor gate."""
    if gate > 0.5:
        y = ACTIVATIONS[name](x)
    else:
        y = ACTIVATIONS["tanh"](x)
    return y


@pytest.mark.parametrize("gate", [0.0, 1.0])
@pytest.mark.parametrize("name", ["relu", "leaky"])
def test_callable_objects_in_a_dict_chosen_by_a_tensor(gate, name, tensors):
    check(gated_activation, [-2.0, -0.5, 0.5, 3.0], gate, py(name), tensors=tensors)


def activation_object_chosen_by_a_tensor(x, gate):
    act = ACTIVATIONS["relu"] if gate > 0.5 else ACTIVATIONS["tanh"]
    return act(x)


def test_an_activation_object_chosen_by_a_tensor_is_a_staging_error():
    # Two Python objects cannot be the outputs of a graph cond: a clear error at the line.
    check(activation_object_chosen_by_a_tensor, [-1.0, 2.0], 1.0, tensors=False)
    staging_error(activation_object_chosen_by_a_tensor, [-1.0, 2.0], 1.0,
                  names=["Relu", "Tanh"], line="act = ACTIVATIONS")


class LinearModel:
    def __init__(self, w, b):
        self.w = w
        self.b = b
        self.seen = 0


def make_online_step(model, lr):
    """A closure over the model: one SGD step on one example."""
    def step(x, y):
        err = model.w * x + model.b - y
        model.w = model.w - lr * err * x
        model.b = model.b - lr * err
        model.seen += 1
        return err
    return step


def fit_online(xs, ys, epochs):
    model = LinearModel(0.0, 0.0)
    step = make_online_step(model, 0.05)
    err = 0.0
    for _ in range(epochs):
        for x, y in zip(xs, ys):
            err = step(x, y)
    return model.w, model.b, model.seen, err


@modes()
@pytest.mark.parametrize("epochs", [3, 2])
def test_a_closure_over_a_model_with_a_python_epoch_count(epochs, tensors):
    # epochs stays a Python int: that loop unrolls; zip over tensors is a graph loop.
    check(fit_online, [1.0, 2.0, 3.0], [3.0, 5.0, 7.0], py(epochs), tensors=tensors)


@modes()
@pytest.mark.parametrize("epochs", [3, 2])
def test_a_closure_over_a_model_in_a_tensor_loop(epochs, tensors):
    check(fit_online, [1.0, 2.0, 3.0], [3.0, 5.0, 7.0], epochs, tensors=tensors)


class Inventory:
    def __init__(self, stock):
        self.stock = stock
        self.shipped = 0
        self.backorders = 0

    def fill(self, order):
        if order <= self.stock:
            self.stock = self.stock - order
            self.shipped += order
            return True
        self.backorders += 1
        return False


def fill_orders(inventory, orders):
    """The inventory is passed in (and used by the caller afterwards)."""
    filled = 0
    for order in orders:
        ok = inventory.fill(order)
        if ok:
            filled += 1
    return filled, inventory.stock, inventory.shipped, inventory.backorders


def fill_orders_from_scratch(stock, orders):
    """The same with the inventory created inside the converted function."""
    inventory = Inventory(stock)
    filled = 0
    for order in orders:
        if inventory.fill(order):
            filled += 1
    return filled, inventory.stock, inventory.shipped, inventory.backorders


ORDERS = [([3, 4, 10, 2], 12), ([1, 1, 1], 2), ([5], 5), ([20, 1], 3)]


@pytest.mark.parametrize("orders, stock", ORDERS)
def test_an_inventory_passed_in(orders, stock, tensors):
    check(fill_orders, fresh(lambda v: Inventory(v(stock))), orders, tensors=tensors)


@pytest.mark.parametrize("orders, stock", ORDERS)
def test_an_inventory_created_inside(orders, stock, tensors):
    check(fill_orders_from_scratch, stock, orders, tensors=tensors)


# == early exits and printing from methods =========================================================

class Sensor:
    def __init__(self, name, limit):
        self.name = name
        self.limit = limit
        self.checked = 0
        self.faults = 0

    def first_fault(self, readings):
        for i, r in enumerate(readings):
            self.checked += 1
            if r > self.limit:
                self.faults += 1
                print(f"{self.name}: reading {i} = {r:.1f} exceeds {self.limit:.1f}")
                return i
        print(f"{self.name}: all {self.checked} readings fine")
        return -1


def scan_sensors(readings, limit):
    pressure = Sensor("pressure", limit)
    temperature = Sensor("temperature", limit * 2.0)
    a = pressure.first_fault(readings)
    b = temperature.first_fault(readings)
    return a, b, pressure.checked, temperature.checked, pressure.faults + temperature.faults


@pytest.mark.parametrize("readings, limit", [
    ([1.0, 2.0, 5.0, 9.0], 3.0),        # the second sensor stops later
    ([1.0, 2.0], 3.0),                  # no fault
    ([], 1.0),                          # nothing to read
    ([7.0, 1.0], 1.0),                  # both stop at once
])
def test_early_return_from_a_method_inside_a_tensor_loop(readings, limit, tensors):
    if not readings:
        readings = np.zeros([0], np.float32) if tensors else []
    check(scan_sensors, readings, limit, tensors=tensors)


class SavingsAccount:
    def __init__(self, owner, balance, rate):
        self.owner = owner
        self.balance = balance
        self.rate = rate
        self.months = 0

    def accrue(self):
        interest = self.balance * self.rate / 12.0
        self.balance = self.balance + interest
        self.months += 1
        return interest

    def statement(self, target, max_months):
        while self.balance < target and self.months < max_months:
            interest = self.accrue()
            print(f"{self.owner} month {self.months:>2}: +{interest:.2f} -> "
                  f"{self.balance:,.2f} ({self.rate:.1%} a year)")
        print("{} reached {:.2f} after {} months".format(self.owner, self.balance,
                                                         self.months))
        return self.balance, self.months


def savings_plan(balance, target, max_months):
    account = SavingsAccount("ada", balance, 0.06)
    return account.statement(target, max_months)


@pytest.mark.parametrize("balance, target, max_months", [
    (1000.0, 1030.0, 24), (1000.0, 900.0, 24), (5000.0, 1e6, 4), (1234.5, 1300.0, 0),
])
def test_printing_object_state_with_f_strings_in_a_loop(balance, target, max_months, tensors):
    check(savings_plan, balance, target, max_months, tensors=tensors)


class Position:
    def __init__(self, qty, price):
        self.qty = qty
        self.price = price

    def __str__(self):
        return f"Position({self.qty} @ {self.price:.2f})"


def print_positions(qty, price, days):
    position = Position(qty, price)
    for _ in range(days):
        position.price = position.price * 1.1
        print(position)
    return position.price


@modes()
def test_printing_an_object_with_a_str_method_in_a_loop(tensors):
    check(print_positions, 3, 10.0, 2, tensors=tensors)


class Gauge:
    """Formats itself with a repr and a format spec of its own."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Gauge({self.value:.1f})"

    def __format__(self, spec):
        if spec == "raw":
            return str(self.value)
        return format(self.value, spec) + " units"


def formatting_user_objects(x):
    r = Gauge(x)
    print(r)                                    # no __str__: object.__str__ calls __repr__
    print([1, 2], r, sep=" | ")
    print(f"{r!r} {r:.2f} {r:raw} {r!s:>20}")
    print("{} and {:.1f}".format(r, r), str(r) + "!", repr(r), format(r, ".3f"))
    r.value = r.value * 2                       # later changes print later
    print(r)
    return r.value


@pytest.mark.parametrize("x, tensors", both(-1.25) + both(3.5))
def test_printing_user_objects_formats_them_as_they_are_then(x, tensors):
    check(formatting_user_objects, x, tensors=tensors)


class LogSection:
    """A context manager that reports entering and leaving a section of work."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        print(f"[{self.name}] begin")
        return self

    def __exit__(self, *exc):
        print(f"[{self.name}] end")
        return False


def sectioned_training(w, epochs):
    for _ in range(epochs):
        with LogSection("epoch"):
            w = w * 0.5 + 1.0
    return w


def test_a_context_manager_object_in_a_python_loop():
    check(sectioned_training, 4.0, 3, tensors=False)
    check(sectioned_training, 4.0, py(3), tensors=True)


def test_a_context_manager_object_in_a_tensor_loop():
    check(sectioned_training, 4.0, 3, tensors=True)


class WarmupSchedule:
    """A learning rate that ramps up linearly for `warmup` steps, then decays; a property
    with a tensor `if`."""

    def __init__(self, base, warmup):
        self.base = base
        self.warmup = warmup
        self.step = 0

    @property
    def lr(self):
        if self.step < self.warmup:
            return self.base * (self.step + 1) / self.warmup
        return self.base * 0.9 ** (self.step - self.warmup)


def warmup_descent(w, steps, warmup):
    schedule = WarmupSchedule(0.5, warmup)
    for _ in range(steps):
        w = w - schedule.lr * 2.0 * w
        schedule.step += 1
    return w, schedule.step


@modes()
@pytest.mark.parametrize("steps, warmup", [(6, 3), (2, 4)])
def test_a_property_with_a_tensor_if(steps, warmup, tensors):
    if tensors:     # `base * (step + 1) / warmup` of int32 tensors is float32 (numpy: float64)
        assert_equivalent(warmup_descent, 1.0, steps, warmup, tensors=True)
    else:
        check(warmup_descent, 1.0, steps, warmup, tensors=tensors)


class LCG:
    """A linear congruential generator: `next()` advances its state."""

    def __init__(self, seed):
        self.state = seed

    def next(self):
        self.state = (self.state * 75 + 74) % 65537
        return self.state

    def uniform(self):
        return self.next() / 65537.0


def monte_carlo_pi(seed, n):
    rng = LCG(seed)
    hits = 0
    for _ in range(n):
        x = rng.uniform()
        y = rng.uniform()
        if x * x + y * y < 1.0:
            hits += 1
    return 4.0 * hits / n


def monte_carlo_pi_reporting_state(seed, n):
    rng = LCG(seed)
    hits = 0
    for _ in range(n):
        x = rng.uniform()
        y = rng.uniform()
        if x * x + y * y < 1.0:
            hits += 1
    return hits, rng.state          # the state is read after the loop: it is carried


@modes()
@pytest.mark.parametrize("seed, n", [(1, 50), (12345, 20)])
def test_a_random_generator_object_in_a_monte_carlo_loop(seed, n, tensors):
    if tensors:     # `4.0 * hits / n` of an int32 count is float32 (numpy's is float64)
        eager = assert_equivalent(monte_carlo_pi, seed, n, tensors=True)
        graph = ag.convert(monte_carlo_pi)(rt.constant(seed), rt.constant(n))
        assert eager.dtype == graph.dtype == rt.float32
    else:
        check(monte_carlo_pi, seed, n, tensors=tensors)


@pytest.mark.parametrize("seed, n", [(1, 50), (12345, 20), (7, 0)])
def test_a_random_generator_object_whose_state_is_returned(seed, n, tensors):
    check(monte_carlo_pi_reporting_state, seed, n, tensors=tensors)


# == interpreters, filters, controllers ===========================================================

class Expr:
    def __add__(self, other):
        return Add(self, other)

    def __mul__(self, other):
        return Mul(self, other)


class Const(Expr):
    def __init__(self, value):
        self.value = value

    def evaluate(self, env):
        return self.value

    def diff(self, name):
        return Const(0.0)


class Var(Expr):
    def __init__(self, name):
        self.name = name

    def evaluate(self, env):
        return env[self.name]

    def diff(self, name):
        return Const(1.0 if name == self.name else 0.0)


class Add(Expr):
    def __init__(self, left, right):
        self.left, self.right = left, right

    def evaluate(self, env):
        return self.left.evaluate(env) + self.right.evaluate(env)

    def diff(self, name):
        return Add(self.left.diff(name), self.right.diff(name))


class Mul(Expr):
    def __init__(self, left, right):
        self.left, self.right = left, right

    def evaluate(self, env):
        return self.left.evaluate(env) * self.right.evaluate(env)

    def diff(self, name):
        return Add(Mul(self.left.diff(name), self.right),
                   Mul(self.left, self.right.diff(name)))


class IfPositive(Expr):
    """`then` where `test` > 0, else `orelse`: a tensor `if` when evaluated on tensors."""

    def __init__(self, test, then, orelse):
        self.test, self.then, self.orelse = test, then, orelse

    def evaluate(self, env):
        if self.test.evaluate(env) > 0:
            return self.then.evaluate(env)
        return self.orelse.evaluate(env)

    def diff(self, name):
        return IfPositive(self.test, self.then.diff(name), self.orelse.diff(name))


def newton_on_an_expression_tree(x0, c, iterations):
    """Solves f(x) = x^3 + c*x - 5 = 0 (a different cubic left of zero) by Newton's method on
    a symbolic derivative built from the expression tree by recursion."""
    x = Var("x")
    cubic = x * x * x + Const(c) * x + Const(-5.0)
    left = x * x * x * Const(-1.0) + Const(c) * x + Const(-5.0)
    f = IfPositive(x, cubic, left)
    df = f.diff("x")
    value = x0
    for _ in range(iterations):
        env = {"x": value}
        slope = df.evaluate(env)
        if slope == 0.0:
            print("flat slope, stopping")
            break
        value = value - f.evaluate(env) / slope
    return value, f.evaluate({"x": value})


@pytest.mark.parametrize("x0, c, iterations", [
    (2.0, 1.0, 8), (-1.0, 2.0, 6), (1.0, 0.0, 0), (0.0, 0.0, 3),
])
def test_an_expression_tree_interpreter_with_derivatives(x0, c, iterations, tensors):
    check(newton_on_an_expression_tree, x0, c, iterations, tensors=tensors)


class Kalman1D:
    """A constant-position Kalman filter that rejects outliers by an innovation gate."""

    def __init__(self, q, r, gate):
        self.x = 0.0
        self.p = 1.0
        self.q, self.r, self.gate = q, r, gate
        self.rejected = 0

    def predict(self):
        self.p = self.p + self.q

    def update(self, z):
        innovation = z - self.x
        s = self.p + self.r
        if innovation * innovation > self.gate * self.gate * s:
            self.rejected += 1
            return False
        k = self.p / s
        self.x = self.x + k * innovation
        self.p = (1.0 - k) * self.p
        return True


def track(measurements, gate):
    kf = Kalman1D(0.01, 0.5, gate)
    accepted = 0
    for z in measurements:
        kf.predict()
        if kf.update(z):
            accepted += 1
    return kf.x, kf.p, kf.rejected, accepted


@pytest.mark.parametrize("measurements, gate", [
    ([1.0, 1.2, 0.9, 9.0, 1.1, 1.0], 3.0),      # one outlier rejected
    ([1.0, 1.2, 0.9, 9.0, 1.1, 1.0], 100.0),    # none rejected
    ([5.0, 5.0], 0.1),                          # all rejected
])
def test_a_kalman_filter_with_an_outlier_gate(measurements, gate, tensors):
    check(track, measurements, gate, tensors=tensors)


class PID:
    def __init__(self, kp, ki, kd):
        self.kp, self.ki, self.kd = kp, ki, kd
        self.integral = 0.0
        self.previous = 0.0

    def control(self, error, dt):
        self.integral = self.integral + error * dt
        derivative = (error - self.previous) / dt
        self.previous = error
        return self.kp * error + self.ki * self.integral + self.kd * derivative


class Tank:
    def __init__(self, level):
        self.level = level

    def fill(self, inflow, dt):
        inflow = rt.clip_by_value(inflow, 0.0, 5.0)
        self.level = self.level + (inflow - 0.3 * self.level) * dt


def regulate_tank(setpoint, level, max_steps, tol):
    pid = PID(1.2, 0.4, 0.05)
    tank = Tank(level)
    steps = 0
    settled = 0
    while settled < 3 and steps < max_steps:
        error = setpoint - tank.level
        tank.fill(pid.control(error, 0.1), 0.1)
        if abs(error) < tol:
            settled += 1
        else:
            settled = 0
        steps += 1
    return tank.level, steps, pid.integral




@pytest.mark.parametrize("setpoint, level, max_steps, tol, tensors", [
    *both(2.0, 0.0, 400, 0.05),
    *both(1.0, 1.0, 50, 0.1),
    *both(3.0, 0.0, 5, 0.01),
    *both(3.0, 0.0, 0, 0.01),
])
def test_a_pid_controller_filling_a_tank(setpoint, level, max_steps, tol, tensors):
    check(regulate_tank, setpoint, level, max_steps, tol, tensors=tensors)


class Epidemic:
    def __init__(self, population, infected, beta, gamma):
        self.s = population - infected
        self.i = infected
        self.r = 0.0
        self.n = population
        self.beta, self.gamma = beta, gamma
        self.day = 0
        self.peak = infected

    def step(self):
        new_infections = self.beta * self.s * self.i / self.n
        recoveries = self.gamma * self.i
        self.s = self.s - new_infections
        self.i = self.i + new_infections - recoveries
        self.r = self.r + recoveries
        self.day += 1
        if self.i > self.peak:
            self.peak = self.i




def outbreak(infected, beta, max_days):
    sim = Epidemic(1000.0, infected, beta, 0.1)
    while sim.i >= 1.0 and sim.day < max_days:
        sim.step()
    return sim.day, sim.peak, sim.r


@pytest.mark.parametrize("infected, beta, max_days, tensors", [
    *both(1.0, 0.3, 1000),
    *both(10.0, 0.05, 1000),
    *both(0.5, 0.3, 1000),                              # under one infected: no day passes
    *both(5.0, 0.4, 20),
])
def test_an_epidemic_read_through_attributes_in_the_loop_condition(infected, beta, max_days,
                                                                    tensors):
    check(outbreak, infected, beta, max_days, tensors=tensors)


class Population:
    def __init__(self, size, growth):
        self.size = size
        self.growth = growth

    def grow(self, factor):
        self.size = self.size * (1.0 + self.growth * factor)
        if self.size < 0.01:
            self.size = 0.0 * self.size


def predator_prey(rabbits0, foxes0, seasons):
    rabbits = Population(rabbits0, 0.5)
    foxes = Population(foxes0, 0.2)
    extinct_at = -1
    for season in range(seasons):
        food = rabbits.size / (rabbits.size + 50.0)
        rabbits.grow(1.0 - foxes.size / 20.0)
        foxes.grow(food - 0.5)
        if foxes.size == 0.0 and extinct_at < 0:
            extinct_at = season
    return rabbits.size, foxes.size, extinct_at


@pytest.mark.parametrize("rabbits0, foxes0, seasons", [
    (100.0, 5.0, 12), (10.0, 30.0, 40), (50.0, 0.0, 3), (100.0, 5.0, 0),
])
def test_two_interacting_populations(rabbits0, foxes0, seasons, tensors):
    check(predator_prey, rabbits0, foxes0, seasons, tensors=tensors)


# == state machines, containers held in attributes ================================================

class WordCounter:
    """A two-state machine over character codes: counts words and the longest one."""
    SPACE = 32

    def __init__(self):
        self.in_word = False
        self.words = 0
        self.length = 0
        self.longest = 0

    def feed(self, code):
        if code == WordCounter.SPACE:
            if self.in_word:
                self.longest = max(self.longest, self.length)
            self.in_word = False
        elif self.in_word:
            self.length += 1
        else:
            self.in_word = True
            self.words += 1
            self.length = 1

    def finish(self):
        if self.in_word:
            self.longest = max(self.longest, self.length)
        return self.words, self.longest


def count_words(codes):
    counter = WordCounter()
    for code in codes:
        counter.feed(code)
    return counter.finish()


@modes()        # in_word, length, longest: read by feed() and finish() only
@pytest.mark.parametrize("text", ["the quick  brown fox", "  a bb ccc ", "", "word"])
def test_a_word_counting_state_machine(text, tensors):
    codes = [ord(c) for c in text]
    if not codes:
        codes = np.zeros([0], np.int32) if tensors else []
    check(count_words, codes, tensors=tensors)


class Metrics:
    """Running sums kept in a dict attribute, keyed by metric name."""

    def __init__(self, names):
        self.totals = {name: 0.0 for name in names}
        self.count = 0

    def update(self, **values):
        for name, value in values.items():
            self.totals[name] = self.totals[name] + value
        self.count += 1

    def result(self):
        if self.count == 0:
            return {name: total * 0.0 for name, total in self.totals.items()}
        return {name: total / self.count for name, total in self.totals.items()}


def evaluate_batches(predictions, labels):
    metrics = Metrics(["abs_error", "sq_error", "hits"])
    for p, y in zip(predictions, labels):
        err = p - y
        metrics.update(abs_error=abs(err), sq_error=err * err,
                       hits=1.0 if abs(err) < 0.5 else 0.0)
    return metrics.result(), metrics.count


@modes()        # metrics.totals: read by update() and result() only
@pytest.mark.parametrize("predictions, labels", [
    ([1.0, 2.0, 3.5], [1.2, 2.0, 2.0]), ([0.0], [10.0]),
])
def test_metrics_in_a_dict_attribute_updated_by_keyword(predictions, labels, tensors):
    check(evaluate_batches, predictions, labels, tensors=tensors)


# == converting methods, callable objects and partials directly ==================================

class Scaler:
    def __init__(self, k):
        self.k = k

    def grow(self, x, bias):
        """Scales x until its largest element passes 100."""
        x = rt.convert_to_tensor(x, rt.float32)
        steps = 0
        while rt.reduce_max(x) < 100.0:
            x = x * self.k + bias
            steps += 1
        return x, steps


@pytest.mark.parametrize("x, bias", [([1.0, 3.0], 1.0), ([200.0, 0.0], 0.0), ([0.5], 2.0)])
def test_convert_a_bound_method(x, bias, tensors):
    check(method("grow"), fresh(lambda v: Scaler(v(2.0))), x, bias, tensors=tensors)


@pytest.mark.parametrize("x", [[1.0, 3.0], [200.0, 0.0]])
def test_convert_a_partial_of_a_bound_method(x, tensors):
    check(method(lambda obj: functools.partial(obj.grow, bias=0.5)),
          fresh(lambda v: Scaler(v(3.0))), x, tensors=tensors)


class PositiveCounter:
    """A callable object: counts the positive entries, stopping at a sentinel."""

    def __init__(self, sentinel):
        self.sentinel = sentinel

    def __call__(self, xs):
        count = 0
        for x in xs:
            if x == self.sentinel:
                break
            if x > 0:
                count += 1
        return count


@pytest.mark.parametrize("xs", [[1, -1, 2, 0, 5], [3, 9, 4], [9], [-1, -2]])
def test_convert_a_callable_object(xs, tensors):
    check(method(lambda obj: obj), fresh(lambda v: PositiveCounter(v(9))), xs,
          tensors=tensors)


class Halver:
    """A model whose __call__ is decorated with ag.convert in the class body."""

    def __init__(self, scale):
        self.scale = scale

    @ag.convert
    def __call__(self, x, n):
        for _ in range(n):
            if rt.reduce_sum(x) > 10.0:
                x = x * 0.5
            else:
                x = x * self.scale
        print("sum after", n, "steps:", rt.reduce_sum(x))
        return x


@pytest.mark.parametrize("n", [4, 0])
def test_a_method_decorated_in_the_class_body_on_two_instances(n):
    plain = Halver.__call__.python_function
    for scale in (3.0, 1.5):
        model = Halver(scale)
        x = np.array([1.0, 2.0], np.float32)
        expected, expected_text = _run(plain, [model, x, np.int32(n)])
        actual, actual_text = _run(model, [rt.constant(x), rt.constant(n)])
        assert actual_text == expected_text
        assert_same(expected, actual)


# == more models and simulations ===================================================================

class RNNCell:
    def __init__(self, wx, wh):
        self.wx = rt.Variable(wx)
        self.wh = rt.Variable(wh)

    def __call__(self, x, h):
        return rt.tanh(x * self.wx + h * self.wh)


class RNN:
    """Runs its cell over a sequence, collecting the states, stopping when one saturates."""

    def __init__(self, cell, limit):
        self.cell = cell
        self.limit = limit

    def run(self, xs, h):
        states = []
        for x in xs:
            h = self.cell(x, h)
            states.append(h)
            if abs(h) > self.limit:
                print(f"saturated at {h:.4f}")
                break
        return rt.stack(states), h


_CELL = RNNCell(np.float32(0.8), np.float32(1.1))     # made once, as _CONTRACTION


def run_rnn(xs, h0, limit):
    rnn = RNN(_CELL, limit)
    return rnn.run(xs, h0)


RNN_CASES = [([0.1, 0.2, -0.3, 0.4], 0.0, 0.9), ([0.5, 0.5, 0.5, 0.5], 0.0, 0.6),
             ([1.0], 0.5, 0.1)]


@pytest.mark.parametrize("xs, h0, limit", RNN_CASES)
def test_a_recurrent_cell_held_by_a_model_collects_its_states(xs, h0, limit):
    check(run_rnn, xs, h0, limit, tensors=True)


@pytest.mark.parametrize("xs, h0, limit", RNN_CASES[:2])
def test_a_tensor_break_out_of_a_python_list_loop_that_appends(xs, h0, limit):
    # A Python list of inputs unrolls the loop; whether the break happens is known only at
    # run time, so the number of states is too: `states` becomes a tensor list.
    check(run_rnn, xs, h0, limit, tensors=False)


class Regularized:
    """A Python `training` flag switched by methods picks the code path while tracing."""

    def __init__(self, w):
        self.w = w
        self.training = True

    def train(self):
        self.training = True
        return self

    def eval(self):
        self.training = False
        return self

    def forward(self, x):
        y = rt.convert_to_tensor(x, rt.float32) * self.w
        if self.training:
            y = y + 0.01 * self.w * self.w      # a penalty added only while training
            if rt.reduce_max(y) > 5.0:
                y = y / rt.reduce_max(y) * 5.0
        return y


def train_then_eval(w, x):
    model = Regularized(w)
    a = model.train().forward(x)
    b = model.eval().forward(x)
    return a, b, model.training


@pytest.mark.parametrize("w, x", [(2.0, [1.0, 2.0]), (3.0, [1.0, 2.0]), (-1.0, [4.0])])
def test_a_python_training_flag_switched_by_methods(w, x, tensors):
    check(train_then_eval, w, x, tensors=tensors)


class ParamSet:
    """Named parameters, iterable like a list of them."""

    def __init__(self, **params):
        self.params = {k: rt.convert_to_tensor(v, rt.float32) for k, v in params.items()}

    def __iter__(self):
        return iter(self.params.values())

    def __len__(self):
        return len(self.params)

    def global_norm(self):
        return rt.sqrt(sum(rt.reduce_sum(p * p) for p in self))


def clip_by_global_norm(w, b, max_norm):
    params = ParamSet(w=w, b=b)
    norm = params.global_norm()
    if norm > max_norm:
        scale = max_norm / norm
    else:
        scale = 1.0
    return [p * scale for p in params], norm, len(params)


@pytest.mark.parametrize("w, b, max_norm", [
    ([3.0, 4.0], [0.0], 1.0), ([0.3, 0.4], [0.0], 1.0), ([1.0, 1.0], [1.0, 1.0], 2.0),
])
def test_an_iterable_parameter_set_clipped_by_global_norm(w, b, max_norm, tensors):
    check(clip_by_global_norm, w, b, max_norm, tensors=tensors)


class Stack:
    """A stack over a list attribute."""

    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)

    def pop(self):
        return self.items.pop()

    def __len__(self):
        return len(self.items)


def brackets_balanced(codes):
    """codes: 1 opens, -1 closes. Returns early on a close with nothing open."""
    stack = Stack()
    for i, c in enumerate(codes):
        if c > 0:
            stack.push(i)
        else:
            if len(stack) == 0:
                print("unmatched close at", i)
                return False
            stack.pop()
    return len(stack) == 0


@pytest.mark.parametrize("codes, tensors", [
    *both([1, 1, -1, -1]), *both([1, -1, -1, 1]), *both([-1]), *both([1, 1]),
    *both([1, -1, 1, 1, -1, -1]),           # (stack.items: a tensor list in the loop)
])
def test_a_stack_object_over_a_list_attribute(codes, tensors):
    check(brackets_balanced, codes, tensors=tensors)


class Teller:
    def __init__(self):
        self.busy_until = 0
        self.served = 0


class Branch:
    """Customers queue; each free teller takes one for 3 ticks."""

    def __init__(self, tellers):
        self.tellers = [Teller() for _ in range(tellers)]
        self.queue = 0
        self.waited = 0

    def tick(self, t, arrivals):
        self.queue += arrivals
        for teller in self.tellers:
            if teller.busy_until <= t and self.queue > 0:
                teller.busy_until = t + 3
                teller.served += 1
                self.queue -= 1
        self.waited += self.queue


def bank_branch(arrivals):
    branch = Branch(2)
    for t, a in enumerate(arrivals):
        branch.tick(t, a)
    return branch.queue, branch.waited, [teller.served for teller in branch.tellers]


@modes()        # the tellers' busy_until and served, assigned through branch.tick()
@pytest.mark.parametrize("arrivals", [[3, 0, 1, 0, 0, 2, 0], [0, 0], [5]])
def test_a_bank_branch_with_tellers_in_a_list_attribute(arrivals, tensors):
    check(bank_branch, arrivals, tensors=tensors)


Transition = collections.namedtuple("Transition", "obs reward done")


class Corridor:
    """An environment: walk right to reach the end; each step costs 0.1."""

    def __init__(self, length):
        self.length = length
        self.pos = 0
        self.steps = 0

    def reset(self):
        self.pos = 0
        self.steps = 0
        return self.pos

    def step(self, action):
        self.pos = max(self.pos + action, 0)
        self.steps += 1
        done = self.pos >= self.length
        reward = 1.0 if done else -0.1
        return Transition(self.pos, reward, done)


class GreedyPolicy:
    def __init__(self, q):
        self.q = rt.convert_to_tensor(q, rt.float32)

    def act(self, obs):
        return 2 * rt.cast(rt.argmax(self.q[obs]), rt.int32) - 1      # -1 or +1


def run_episode(q, length, max_steps):
    env = Corridor(length)
    policy = GreedyPolicy(q)
    obs = env.reset()
    total, done = 0.0, False
    while not done and env.steps < max_steps:
        transition = env.step(policy.act(obs))
        obs, done = transition.obs, transition.done
        total += transition.reward
    return total, env.steps, obs


Q_RIGHT = [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]
Q_STUCK = [[0.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]




@pytest.mark.parametrize("q, length, max_steps, tensors", [
    *both("right", 4, 20),
    *both("stuck", 4, 9),
    *both("right", 4, 2),
    *both("right", 4, 0),
])
def test_an_episode_of_an_environment_and_a_policy(q, length, max_steps, tensors):
    q = Q_RIGHT if q == "right" else Q_STUCK
    check(run_episode, q, length, max_steps, tensors=tensors)


# == containers with dunder access, slots, generators, configs ====================================

class Grid:
    """Cells reached through __getitem__/__setitem__ of the object."""

    def __init__(self, keys):
        self.cells = {k: 0.0 for k in keys}

    def __getitem__(self, key):
        return self.cells[key]

    def __setitem__(self, key, value):
        self.cells[key] = value


def tally_in_a_grid(xs, threshold):
    grid = Grid(["sum", "big", "small"])
    for x in xs:
        grid["sum"] = grid["sum"] + x
        if x > threshold:
            grid["big"] = grid["big"] + 1.0
        else:
            grid["small"] = grid["small"] + 1.0
    return grid["sum"], grid["big"], grid["small"]


@pytest.mark.parametrize("xs, threshold", [([1.0, 2.0, 3.0], 1.5), ([0.5], 1.0), ([4.0, 5.0], 0.0)])
def test_items_of_a_user_object_with_getitem_and_setitem(xs, threshold, tensors):
    check(tally_in_a_grid, xs, threshold, tensors=tensors)


class SlottedWalker:
    __slots__ = ("x", "steps", "turns")

    def __init__(self):
        self.x = 0.0
        self.steps = 0
        self.turns = 0

    def move(self, dx):
        if (self.x > 0) != (self.x + dx > 0):
            self.turns += 1
        self.x = self.x + dx
        self.steps += 1


def walk_slotted(moves):
    walker = SlottedWalker()
    for dx in moves:
        if dx != 0.0:
            walker.move(dx)
    return walker.x, walker.steps, walker.turns


@pytest.mark.parametrize("moves", [[1.0, -2.0, 0.0, 3.0, -0.5], [0.0, 0.0], [-1.0]])
def test_a_class_with_slots_mutated_by_a_method(moves, tensors):
    check(walk_slotted, moves, tensors=tensors)


class BatchLoader:
    """Batches of a tensor from a generator __iter__ (a generator runs unconverted)."""

    def __init__(self, data, batch_size):
        self.data = data
        self.batch_size = batch_size

    def __iter__(self):
        for start in range(0, len(self.data), self.batch_size):
            yield self.data[start:start + self.batch_size]


def sum_of_heavy_batches(data, limit):
    total = 0.0
    heavy = 0
    for batch in BatchLoader(data, 2):
        s = rt.reduce_sum(batch)
        if s > limit:
            total += s
            heavy += 1
    return total, heavy


@pytest.mark.parametrize("data, limit", [([1.0, 2.0, 3.0, 4.0, 5.0], 3.0), ([1.0, 1.0], 5.0)])
def test_a_loader_object_with_a_generator_iter(data, limit, tensors):
    check(sum_of_heavy_batches, data, limit, tensors=tensors)


class ReplayBuffer:
    """Keeps the positive rewards in a tensor attribute that grows along its first axis."""

    def __init__(self, like):
        self.rewards = like[:0]

    def push(self, reward):
        self.rewards = rt.concat([self.rewards, rt.expand_dims(reward, 0)], 0)


def collect_rewards(rewards):
    buffer = ReplayBuffer(rt.convert_to_tensor(rewards, rt.float32))
    for r in rewards:
        ag.set_loop_options(shape_invariants=[(buffer.rewards, [None])])
        if r > 0:
            buffer.push(r)
    return buffer.rewards


def collect_rewards_without_invariants(rewards):
    buffer = ReplayBuffer(rt.convert_to_tensor(rewards, rt.float32))
    for r in rewards:
        if r > 0:
            buffer.push(r)
    return buffer.rewards


@pytest.mark.parametrize("rewards", [[1.0, -2.0, 3.0], [-1.0, -1.0], [2.0]])
def test_a_replay_buffer_attribute_with_a_shape_invariant(rewards):
    check(collect_rewards, rewards, tensors=True)


def test_a_growing_attribute_without_a_shape_invariant_is_a_staging_error():
    staging_error(collect_rewards_without_invariants, [1.0, -2.0, 3.0],
                  names=["buffer.rewards", "shape_invariants"], line="for r in rewards:")


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    lr: float
    steps: int
    verbose: bool = False


def train_with_config(w, config):
    for step in range(config.steps):
        w = w - config.lr * 2.0 * (w - 1.0)
        if config.verbose:
            print(f"step {step}: w = {w:.4f}")
    return w


def test_a_frozen_dataclass_config_is_a_python_argument_of_the_trace():
    f = ag.convert(train_with_config)
    for config in (TrainConfig(0.1, 3), TrainConfig(0.1, 3), TrainConfig(0.2, 2, True)):
        expected, expected_text = _run(train_with_config, [np.float32(3.0), config])
        actual, actual_text = _run(f, [rt.constant(np.float32(3.0)), config])
        assert actual_text == expected_text
        assert_same(expected, actual)
    assert f.experimental_get_tracing_count() == 2        # equal configs share a trace


class NewtonSolver:
    """Inner while loops (one per target) inside the outer loop of another method."""

    def __init__(self, tol):
        self.tol = tol
        self.total_iterations = 0

    def sqrt(self, a):
        x = a
        iterations = 0
        while abs(x * x - a) > self.tol * a and iterations < 100:
            x = 0.5 * (x + a / x)
            iterations += 1
        return x, iterations

    def solve_all(self, targets):
        roots = []
        for a in targets:
            root, iterations = self.sqrt(a)
            self.total_iterations += iterations
            roots.append(root)
        return rt.stack(roots), self.total_iterations


def square_roots(targets, tol):
    return NewtonSolver(tol).solve_all(targets)


@pytest.mark.parametrize("targets, tol", [
    ([2.0, 9.0, 1e4], 1e-6), ([1.0], 1e-3), ([4.0, 0.25], 0.5),
])
def test_nested_loops_across_method_boundaries(targets, tol, tensors):
    check(square_roots, targets, tol, tensors=tensors)


class Tracker:
    def __init__(self, value):
        self.value = value


def tracker_made_in_a_branch(x):
    if x > 0:
        tracker = Tracker(x)
    else:
        tracker = Tracker(-x)
    return tracker.value


def test_an_object_created_in_either_branch_of_a_tensor_if_is_a_staging_error():
    check(tracker_made_in_a_branch, -2.0, tensors=False)
    staging_error(tracker_made_in_a_branch, -2.0, names=["'tracker'", "Tracker"],
                  line="if x > 0:")


# == more method patterns ==========================================================================

class RunningTotal:
    """A fluent API: add() returns self, so the loop reassigns the same object."""

    def __init__(self):
        self.total = 0.0
        self.n = 0

    def add(self, x):
        self.total = self.total + x
        self.n += 1
        return self

    def scaled(self, k):
        self.total = self.total * k
        return self


def fluent_totals(xs, k):
    acc = RunningTotal()
    for x in xs:
        if x > 0:
            acc = acc.add(x)
        else:
            acc = acc.add(-x).scaled(k)
    return acc.total, acc.n


@pytest.mark.parametrize("xs, k", [([1.0, -2.0, 3.0], 0.5), ([2.0], 3.0), ([-1.0, -1.0], 2.0)])
def test_a_fluent_method_returning_self_in_a_tensor_loop(xs, k, tensors):
    check(fluent_totals, xs, k, tensors=tensors)


class Catalogue:
    def __init__(self, codes):
        self.codes = codes
        self.probes = 0

    def index_of(self, code):
        """A for/else: the else runs when no break happened."""
        for i, c in enumerate(self.codes):
            self.probes += 1
            if c == code:
                break
        else:
            return -1
        return i


def look_up(codes, wanted, other):
    catalogue = Catalogue(codes)
    a = catalogue.index_of(wanted)
    b = catalogue.index_of(other)
    return a, b, catalogue.probes


@pytest.mark.parametrize("codes, wanted, other", [
    ([4, 8, 15, 16], 15, 4), ([4, 8, 15, 16], 23, 16), ([7], 7, 8),
])
def test_a_for_else_search_in_a_method(codes, wanted, other, tensors):
    check(look_up, codes, wanted, other, tensors=tensors)


class Lazy:
    def observe(self, x):
        if x > 0:
            self.last_positive = x          # the attribute exists only after a positive x


def lazily_created_attribute(x):
    obj = Lazy()
    obj.observe(x)
    return obj.last_positive


def test_an_attribute_created_in_one_branch_of_a_tensor_if_is_a_staging_error():
    check(lazily_created_attribute, 2.0, tensors=False)
    staging_error(lazily_created_attribute, 2.0, names=["self.last_positive"],
                  line="if x > 0:")


class StepCounter:
    """A callable callback whose state lives in rt.Variables: graph calls update them."""

    def __init__(self):
        self.steps = rt.Variable(0, name="steps")
        self.total = rt.Variable(0.0, name="total")

    def __call__(self, loss):
        self.steps.assign_add(1)
        if loss > 1.0:
            self.total.assign_add(loss)


def train_with_callback(callback, losses):
    for loss in losses:
        callback(loss)
    return callback.steps.read_value()


@pytest.mark.parametrize("losses", [[0.5, 2.0, 3.0], [0.1]])
def test_a_callable_callback_holding_variables_across_calls(losses):
    eager_cb, graph_cb = StepCounter(), StepCounter()
    f = ag.convert(train_with_callback)
    x = np.array(losses, np.float32)
    for _ in range(3):                  # three calls: the graph updates the variables each time
        expected = train_with_callback(eager_cb, x)
        actual = f(graph_cb, rt.constant(x))
        assert_same(expected, actual)
    assert_same(eager_cb.steps.numpy(), graph_cb.steps.numpy())
    assert_same(eager_cb.total.numpy(), graph_cb.total.numpy())


# == reduced reproductions of the bugs found =======================================================

def list_replaced_by_a_tensor_it_is_read_into(n):
    x = [1.0, 2.0]
    i = 0
    while i < n:
        x = rt.constant([3.0, 4.0]) - x
        i += 1
    return x


class Clock:
    def __init__(self):
        self.t = 0.0

    def tick(self):
        self.t = self.t + 1.0

    def advance(self, dt):
        self.t = self.t + dt

    def __call__(self):
        self.t = self.t + 1.0


class Simulation:
    def __init__(self):
        self.clock = Clock()

    def run(self, n):
        i = 0
        while i < n:
            self.clock.tick()
            i += 1
        return self.clock.t


def method_of_an_attribute(n):
    return Simulation().run(n)


def method_of_an_item(n):
    clocks = [Clock()]
    i = 0
    while i < n:
        clocks[0].tick()
        i += 1
    return clocks[0].t


def callable_object_in_a_loop(n):
    clock = Clock()
    i = 0
    while i < n:
        clock()
        i += 1
    return clock.t


def method_of_a_loop_target(n):
    clocks = [Clock(), Clock()]
    i = 0
    while i < n:
        for c in clocks:
            c.tick()
        i += 1
    return clocks[0].t, clocks[1].t


def tick(c):
    c.tick()


def helper_calling_a_method(n):
    clock = Clock()
    i = 0
    while i < n:
        tick(clock)
        i += 1
    return clock.t


class Wallet:
    def __init__(self, balance):
        self.balance = balance

    def deposit(self, amount):
        self.balance = self.balance + amount

    def pay(self, other, amount):
        self.balance = self.balance - amount
        other.deposit(amount)


def method_calling_a_method_of_its_argument(amounts):
    alice, bob = Wallet(10.0), Wallet(0.0)
    for amount in amounts:
        alice.pay(bob, amount)
    return alice.balance, bob.balance


def advance_if(c, dt):
    if dt > 0:
        c.advance(dt)


def method_of_a_parameter_in_a_branch(dt):
    clock = Clock()
    advance_if(clock, dt)
    return clock.t


@dataclasses.dataclass
class Total:
    total: object


def closure_assigning_an_attribute(n):
    c = Clock()

    def tick():
        c.t = c.t + 1.0
    i = 0
    while i < n:
        tick()
        i += 1
    return c.t


def make_tick(c):
    def tick():
        c.t = c.t + 1.0
    return tick


def closure_from_a_factory(n):
    c = Clock()
    tick = make_tick(c)
    i = 0
    while i < n:
        tick()
        i += 1
    return c.t


class Price:
    def __init__(self, value):
        self.value = value

    def __str__(self):
        return f"Price({self.value:.2f})"


def print_an_object_with_str(x):
    print(Price(x))
    return x


class Label:
    def __init__(self):
        self.v = 1

    def __str__(self):
        return f"Label({self.v})"


def print_then_mutate(x):
    b = Label()
    print(b)
    b.v = 2
    print(b)
    return x


class Speed:
    def __init__(self, v):
        self.v = v

    @property
    def magnitude(self):
        if self.v < 0:
            return -self.v
        return self.v


def property_with_a_tensor_if(v):
    return Speed(v).magnitude


class Noisy:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        print("adding")
        return Noisy(self.v + other.v)


def operator_printing_in_a_tensor_loop(n):
    total = 0.0
    for _ in range(n):
        total += (Noisy(1.0) + Noisy(2.0)).v
    return total


def random_generator_state_not_read_by_the_caller(n):
    rng = LCG(1)
    total = 0
    for _ in range(n):
        total += rng.next() % 10
    return total


class Stats:
    def __init__(self):
        self.n = 0
        self.total = 0.0

    def add(self, x):
        self.n += 1
        self.total = self.total + x

    def mean(self):
        return self.total / self.n


def state_read_by_a_later_method(xs):
    s = Stats()
    for x in xs:
        s.add(x)
    return s.mean()


def dataclass_result(x):
    return Total(x * 2.0)


def method_of_a_local_name(n):              # the case that works: clock.tick()
    clock = Clock()
    i = 0
    while i < n:
        clock.tick()
        i += 1
    return clock.t


@pytest.mark.parametrize("f, args", [
    pytest.param(list_replaced_by_a_tensor_it_is_read_into, (2,), id="list-read-in-loop"),
    pytest.param(method_of_an_attribute, (3,), id="method-of-an-attribute"),
    pytest.param(method_of_an_item, (3,), id="method-of-an-item"),
    pytest.param(method_of_an_attribute, (0,), id="method-of-an-attribute-no-iteration"),
    pytest.param(callable_object_in_a_loop, (3,), id="callable-object"),
    pytest.param(method_of_a_loop_target, (3,), id="method-of-a-loop-target"),
    pytest.param(helper_calling_a_method, (3,), id="helper-calling-a-method"),
    pytest.param(method_calling_a_method_of_its_argument, ([1.0, 2.0],), id="pay-other"),
    pytest.param(method_of_a_parameter_in_a_branch, (2.0,), id="method-of-a-parameter"),
    pytest.param(closure_assigning_an_attribute, (3,), id="closure-assigning-an-attribute"),
    pytest.param(closure_from_a_factory, (3,), id="closure-from-a-factory"),
    pytest.param(print_an_object_with_str, (2.5,), id="print-an-object-with-str"),
    pytest.param(print_then_mutate, (py(1),), id="print-then-mutate"),
    pytest.param(property_with_a_tensor_if, (-2.0,), id="property-with-a-tensor-if"),
    pytest.param(operator_printing_in_a_tensor_loop, (3,), id="operator-printing"),
    pytest.param(random_generator_state_not_read_by_the_caller, (5,), id="rng-state"),
    pytest.param(state_read_by_a_later_method, ([1.0, 2.0, 6.0],), id="read-by-a-later-method"),
    pytest.param(dataclass_result, (1.0,), id="dataclass-result"),
    pytest.param(method_of_a_local_name, (3,), id="method-of-a-local-name"),
])
def test_reduced(f, args):
    check(f, *args, tensors=True)
