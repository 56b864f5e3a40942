"""An LSTM character language model trained with Adam on Shakespeare's
sonnets (examples/data/sonnets.txt), the whole training run one program:
examples/train_lstm.rs written in Python, printing the same losses on the
same seed and flags.

The parameters are tensors over an iteration dimension ``i``
(``tempo.optim.adam``: ``w[i] = w[i-1] - lr * adam(g[i-1])``); inside each
iteration the LSTM runs forward over the characters ``t`` of a batch of
windows of the text, and back-propagation through time runs backward
(``Program.grad``)::

    python examples/python/train_lstm.py --iterations 200
        [--hidden 32] [--seq-len 32] [--batch 8] [--lr 0.02] [--seed 1]
        [--interpret] [--mlir] [--data FILE]

Prints one line per iteration, ``iteration N loss X``: the mean
cross-entropy (nats per character) of that iteration's batch, before its
update. ``--interpret`` evaluates the program with the reference
interpreter instead of compiling it (slow); ``--mlir`` prints the
program's MLIR instead of running it. Runs from any directory.

The model, per window ``b`` of the batch and step ``t`` (tokens
``x[i, t]``, the next characters ``y[i, t]``):
``z = wx[x] + h[t-1] wh + bias`` (an embedding gather of the four gates),
``c[t] = sigmoid(z_f) c[t-1] + sigmoid(z_i) tanh(z_g)``,
``h[t] = sigmoid(z_o) tanh(c[t])``, ``logits = h[t] wy + by``,
``loss[i, t] = mean_b(-log_softmax(logits)[y])``.
"""

import argparse
import math
import pathlib
import sys

import numpy as np

import tempo

# The bundled text, found from this file (not the working directory).
SONNETS = pathlib.Path(__file__).resolve().parents[1] / "data" / "sonnets.txt"


class Corpus:
    """The characters of a text (sorted, each once) and its tokens."""

    def __init__(self, text):
        self.vocabulary = sorted(set(text))
        index = {c: k for k, c in enumerate(self.vocabulary)}
        self.tokens = np.array([index[c] for c in text], dtype=np.int64)

    def batches(self, iterations, steps, batch):
        """The inputs ``x`` and targets ``y`` (the next characters) of every
        iteration, each ``[iterations, steps, batch]``: window ``b`` of
        iteration ``i`` starts ``(i * batch + b) * steps`` characters in,
        wrapping around the text."""
        starts = len(self.tokens) - steps - 1
        window = np.arange(iterations)[:, None] * batch + np.arange(batch)[None, :]
        start = (window * steps) % starts  # [iterations, batch]
        at = start[:, None, :] + np.arange(steps)[None, :, None]  # [iterations, steps, batch]
        return self.tokens[at], self.tokens[at + 1]


def build(hidden, batch, vocabulary, lr):
    """The training program: outputs ``loss[i, t]``, the mean cross-entropy
    of step ``t`` over the batch in iteration ``i``."""
    h_size, v, b = hidden, vocabulary, batch
    p = tempo.Program()
    i = p.dim("i", "I")
    t = p.dim("t", "T")
    x = p.input("x", [i, t], [b], "int64")
    y = p.input("y", [i, t], [b], "int64")
    # Parameters, initialized uniformly in (-1/sqrt(H), 1/sqrt(H)) as
    # PyTorch does (the inputs `*_init`, not given, are uniform in [-1, 1)
    # from the run's seed).
    shapes = [
        ("wx", [v, 4 * h_size]),
        ("wh", [h_size, 4 * h_size]),
        ("bias", [4 * h_size]),
        ("wy", [h_size, v]),
        ("by", [v]),
    ]
    params = [
        (p.input(f"{name}_init", [], shape, "float64"), p.tensor(name, [i], shape, "float64"))
        for name, shape in shapes
    ]
    wx, wh, bias, wy, by = (param for _, param in params)
    z = p.tensor("z", [i, t], [b, 4 * h_size], "float64")
    c = p.tensor("c", [i, t], [b, h_size], "float64")
    h = p.tensor("h", [i, t], [b, h_size], "float64")

    def gate(k):
        return z[i, t].slice([0, k * h_size], [b, h_size])

    # Gates i, f, g, o, as PyTorch's LSTM stacks them.
    input_gate = gate(0).sigmoid() * gate(2).tanh()
    embedded = wx[i].gather(x[i, t]) + bias[i]
    p.define(z, t == 0, embedded)
    p.otherwise(z, embedded + h[i, t - 1] @ wh[i])
    p.define(c, t == 0, input_gate)
    p.otherwise(c, gate(1).sigmoid() * c[i, t - 1] + input_gate)
    p.otherwise(h, gate(3).sigmoid() * c[i, t].tanh())
    # Cross-entropy: -log_softmax(logits)[y], the maximum taken out first
    # (outside the gradient: it cancels); the targets as ids, compared with
    # arange for one-hot rows.
    logits = h[i, t] @ wy[i] + by[i]
    shifted = logits - logits.max(axis=1, keepdims=True).stop_gradient()
    log_probs = shifted - shifted.exp().sum(axis=1, keepdims=True).log()
    target = tempo.arange(v, "int64").equals(y[i, t].reshape([b, 1])).astype("float64")
    loss = p.tensor("loss", [i, t], [], "float64")
    p.otherwise(loss, -(target * log_probs).sum(axis=1).mean(axis=0))
    scale = 1.0 / math.sqrt(h_size)
    for init, param in params:
        g = p.grad(f"g_{param.name}", loss, param)
        tempo.optim.adam(p, param, g, i, init[()] * scale, lr=lr)
    p.output(loss)
    return p


def train(args, text):
    """Trains on ``text``: the mean loss of each iteration, compiled or
    interpreted."""
    corpus = Corpus(text)
    if len(corpus.tokens) < args.seq_len + 2:
        raise tempo.TempoError(
            f"the text has {len(corpus.tokens)} characters; --seq-len {args.seq_len} needs at least {args.seq_len + 2}"
        )
    program = build(args.hidden, args.batch, len(corpus.vocabulary), args.lr)
    x, y = corpus.batches(args.iterations, args.seq_len, args.batch)
    arguments = dict(I=args.iterations, T=args.seq_len, seed=args.seed, x=x, y=y)
    if args.interpret:
        out = program.interpret(**arguments)
    else:
        out = program.compile().run(**arguments)
    losses = []
    for row in out["loss"].tolist():
        # In order, one addition at a time, as the Rust example sums.
        total = 0.0
        for value in row:
            total += value
        losses.append(total / args.seq_len)
    return losses


def parse(argv):
    parser = argparse.ArgumentParser(prog="train_lstm", description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.02)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--interpret", action="store_true", help="the reference interpreter (slow)")
    parser.add_argument("--mlir", action="store_true", help="print the program's MLIR instead of running it")
    parser.add_argument("--data", help="a text file to train on (default: the sonnets)")
    args = parser.parse_args(argv)
    if min(args.iterations, args.hidden, args.seq_len, args.batch) <= 0:
        parser.exit(2, "train_lstm: --iterations, --hidden, --seq-len and --batch must be positive\n")
    if args.seed < 0:
        parser.exit(2, "train_lstm: --seed takes a number from 0\n")
    return args


def main(argv=None):
    args = parse(argv)
    path = args.data if args.data is not None else SONNETS
    try:
        # As read, without newline translation (as the Rust example reads it).
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as error:
        sys.exit(f"train_lstm: cannot read '{path}': {error}")
    if args.mlir:
        print(build(args.hidden, args.batch, len(Corpus(text).vocabulary), args.lr).mlir(), end="")
        return
    try:
        losses = train(args, text)
    except tempo.TempoError as error:
        sys.exit(str(error))
    for k, loss in enumerate(losses):
        print(f"iteration {k} loss {loss:.6f}")


if __name__ == "__main__":
    main()
