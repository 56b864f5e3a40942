"""Type stubs of ``tempo._tempo``, the extension module (PyO3, a thin layer
over the Rust API): every class, method and function with its signature.
The docstrings here are short; ``help()`` on the runtime objects gives the
full ones, with examples."""

from typing import Any, Callable, Optional, Sequence, Tuple, Union, final

import numpy.typing as npt

# What a dtype argument names.
_DType = str  # "float32", "float64", "int32", "int64" or "bool"
# An index along a dimension: a Dim, an affine Index or an int.
_IndexLike = Union["Dim", "Index", int]
# An operand of an elementwise op: a value or a Python number.
_Operand = Union["Expr", int, float]

class TempoError(Exception):
    """A program refused, or a run that failed: ``file:line:column: error: ...``
    naming the Python call that built the offending op, with a ``hint:`` line
    where one helps."""

    message: str
    """The diagnostic, without the hint."""
    file: Optional[str]
    """The Python file of the call that built the offending op (or made the offending call)."""
    line: Optional[int]
    """Its line."""
    column: Optional[int]
    """Its column (1-based; None before Python 3.11, which gives no columns)."""
    op: Optional[str]
    """The op refused (``"matmul"``, ``"constant"``) or the call (``"Executable.run"``)."""
    hint: Optional[str]
    """What to do about it, where the error has a usual cure."""

@final
class Dim:
    """A temporal dimension: a variable in ``0..bound``."""

    @property
    def bound(self) -> Index:
        """The dimension's bound (``T``) as an index."""
    @property
    def name(self) -> str:
        """The dimension's name."""
    def position(self, dtype: _DType = "float32") -> Expr:
        """The position along this dimension as a value (a scalar of ``dtype``)."""
    def bound_value(self, dtype: _DType = "float32") -> Expr:
        """The bound as a value (a scalar of ``dtype``)."""
    def __add__(self, other: _IndexLike, /) -> Index: ...
    def __radd__(self, other: _IndexLike, /) -> Index: ...
    def __sub__(self, other: _IndexLike, /) -> Index: ...
    def __rsub__(self, other: _IndexLike, /) -> Index: ...
    def __mul__(self, k: int, /) -> Index: ...
    def __rmul__(self, k: int, /) -> Index: ...
    def __mod__(self, k: int, /) -> Index: ...
    def __floordiv__(self, k: int, /) -> Index: ...
    def __neg__(self) -> Index: ...
    def __eq__(self, other: _IndexLike, /) -> Cond:  # type: ignore[override]
        """The condition ``self == other`` (``t == 0``)."""
    def __ge__(self, other: _IndexLike, /) -> Cond: ...
    def __gt__(self, other: _IndexLike, /) -> Cond: ...
    def __le__(self, other: _IndexLike, /) -> Cond: ...
    def __lt__(self, other: _IndexLike, /) -> Cond: ...

@final
class Index:
    """An affine index over dimension variables and bounds (``t - 1``, ``T - 1 - t``)."""

    def __add__(self, other: _IndexLike, /) -> Index: ...
    def __radd__(self, other: _IndexLike, /) -> Index: ...
    def __sub__(self, other: _IndexLike, /) -> Index: ...
    def __rsub__(self, other: _IndexLike, /) -> Index: ...
    def __mul__(self, k: int, /) -> Index: ...
    def __rmul__(self, k: int, /) -> Index: ...
    def __mod__(self, k: int, /) -> Index: ...
    def __floordiv__(self, k: int, /) -> Index: ...
    def __neg__(self) -> Index: ...
    def __eq__(self, other: _IndexLike, /) -> Cond:  # type: ignore[override]
        """The condition ``self == other``."""
    def __ge__(self, other: _IndexLike, /) -> Cond: ...
    def __gt__(self, other: _IndexLike, /) -> Cond: ...
    def __le__(self, other: _IndexLike, /) -> Cond: ...
    def __lt__(self, other: _IndexLike, /) -> Cond: ...

@final
class Cond:
    """A conjunction of affine conditions (``t == 0``, ``(t >= 1) & (t < T)``)."""

    def __and__(self, other: Cond, /) -> Cond:
        """Both conditions."""

@final
class Expr:
    """A value of a definition: reads, constants and ops on them."""

    @property
    def shape(self) -> list[int]:
        """The point's shape (a dynamic size is -1)."""
    @property
    def dtype(self) -> str:
        """The element type, as NumPy names it."""
    def __add__(self, other: _Operand, /) -> Expr: ...
    def __radd__(self, other: _Operand, /) -> Expr: ...
    def __sub__(self, other: _Operand, /) -> Expr: ...
    def __rsub__(self, other: _Operand, /) -> Expr: ...
    def __mul__(self, other: _Operand, /) -> Expr: ...
    def __rmul__(self, other: _Operand, /) -> Expr: ...
    def __truediv__(self, other: _Operand, /) -> Expr: ...
    def __rtruediv__(self, other: _Operand, /) -> Expr: ...
    def __pow__(self, other: _Operand, modulo: None = None, /) -> Expr:
        """``self ** exponent`` elementwise (floats)."""
    def __rpow__(self, other: _Operand, modulo: None = None, /) -> Expr: ...
    def __neg__(self) -> Expr: ...
    def __matmul__(self, other: Expr, /) -> Expr:
        """The matrix product (batched, broadcast as NumPy's)."""
    def __lt__(self, other: _Operand, /) -> Expr:
        """Elementwise ``<`` (booleans)."""
    def __gt__(self, other: _Operand, /) -> Expr: ...
    def __le__(self, other: _Operand, /) -> Expr: ...
    def __ge__(self, other: _Operand, /) -> Expr: ...
    def __eq__(self, other: _Operand, /) -> Expr:  # type: ignore[override]
        """Elementwise ``==`` (booleans): ``tempo.arange(V) == ids.reshape([B, 1])`` is one-hot rows."""
    def __ne__(self, other: _Operand, /) -> Expr:  # type: ignore[override]
        """Elementwise ``!=`` (booleans)."""
    def __bool__(self) -> bool:
        """Refused (a ``TempoError``): a value has no truth value while the program is built."""
    def equals(self, other: _Operand) -> Expr:
        """Elementwise equality (booleans): ``tok.equals(EOS)``, as ``tok == EOS``."""
    def pow(self, exponent: _Operand) -> Expr:
        """``self ** exponent`` elementwise (floats): ``x.pow(0.5)``."""
    def maximum(self, other: _Operand) -> Expr:
        """The elementwise maximum with ``other`` (``max`` is the reduction)."""
    def minimum(self, other: _Operand) -> Expr:
        """The elementwise minimum with ``other`` (``min`` of NumPy)."""
    def exp(self) -> Expr:
        """``e ** x``."""
    def log(self) -> Expr:
        """The natural logarithm."""
    def sqrt(self) -> Expr:
        """The square root."""
    def tanh(self) -> Expr:
        """The hyperbolic tangent."""
    def sigmoid(self) -> Expr:
        """The logistic sigmoid."""
    def relu(self) -> Expr:
        """``max(x, 0)``."""
    def sin(self) -> Expr:
        """The sine."""
    def cos(self) -> Expr:
        """The cosine."""
    def abs(self) -> Expr:
        """The absolute value."""
    def gelu(self) -> Expr:
        """GELU, tanh form (GPT-2's; PyTorch's ``approximate="tanh"``)."""
    def silu(self) -> Expr:
        """SiLU, ``x * sigmoid(x)``."""
    def stop_gradient(self) -> Expr:
        """The same value, through which no gradient passes (``Program.grad``)."""
    def sum(self, axis: int = -1, keepdims: bool = False) -> Expr:
        """The sum along ``axis``."""
    def max(self, axis: int = -1, keepdims: bool = False) -> Expr:
        """The maximum along ``axis`` (a reduction; ``maximum`` is elementwise)."""
    def mean(self, axis: int = -1, keepdims: bool = False) -> Expr:
        """The mean along ``axis``."""
    def layer_norm(self, eps: float = 1e-5, axis: int = -1) -> Expr:
        """Layer normalization along ``axis`` (no scale or shift)."""
    def rms_norm(self, eps: float = 1e-5, axis: int = -1) -> Expr:
        """RMS normalization along ``axis`` (no scale)."""
    def slice(self, offsets: Sequence[int], sizes: Sequence[int]) -> Expr:
        """The box at static ``offsets`` of ``sizes``."""
    def slice_at(self, offsets: Sequence[_IndexLike], sizes: Sequence[int]) -> Expr:
        """The box of static ``sizes`` at offsets that move with the point: ``wpe[()].slice_at([t, 0], [1, D])``."""
    def concat(self, other: Expr, axis: int) -> Expr:
        """The concatenation with ``other`` along ``axis``."""
    def gather(self, indices: Expr) -> Expr:
        """Rows of this table at integer ``indices`` (an embedding lookup)."""
    def argmax(self, axis: int = -1) -> Expr:
        """The index (int64) of the first maximum along ``axis``."""
    def softmax(self, axis: int = -1) -> Expr:
        """The softmax along ``axis``."""
    def reshape(self, shape: Sequence[int]) -> Expr:
        """The same elements in another shape."""
    def permute(self, permutation: Sequence[int]) -> Expr:
        """Result dimension ``k`` is dimension ``permutation[k]``."""
    def astype(self, dtype: _DType) -> Expr:
        """Every element converted to ``dtype``."""

@final
class Tensor:
    """A recurrent tensor: an input or a tensor defined by conditional definitions."""

    @property
    def name(self) -> str:
        """The tensor's name."""
    def __getitem__(self, key: Any, /) -> Expr:
        """A read: ``x[t - 1]``, ``k[0:t + 1]`` (a range), ``w[()]``, ``h[left[n]]`` (through data)."""

@final
class Program:
    """A program of recurrent tensors."""

    def __init__(self) -> None: ...
    def dim(self, name: str, bound: str) -> Dim:
        """A dimension ``name`` of bound ``bound`` (``p.dim("t", "T")``)."""
    def input(self, name: str, domain: Sequence[Dim], shape: Sequence[int], dtype: _DType = "float32") -> Tensor:
        """An input over ``domain`` with points of ``shape`` and ``dtype``."""
    def tensor(self, name: str, domain: Sequence[Dim], shape: Sequence[int], dtype: _DType = "float32") -> Tensor:
        """A tensor over ``domain``, defined by ``define``/``otherwise``."""
    def define(self, tensor: Tensor, when: Cond, value: _Operand) -> None:
        """``tensor`` is ``value`` (an Expr or a number) where ``when`` holds."""
    def otherwise(self, tensor: Tensor, value: _Operand) -> None:
        """``tensor`` is ``value`` (an Expr or a number) wherever no earlier definition holds."""
    def output(self, tensor: Tensor) -> None:
        """Marks ``tensor`` as an output (its whole domain)."""
    def stop(self, done: Tensor, dim: Dim) -> None:
        """Ends ``dim`` where ``done`` (bool points over it) first holds."""
    def grad(self, name: str, of: Tensor, wrt: Tensor) -> Tensor:
        """The gradient of the sum of ``of``'s points with respect to each point of ``wrt``."""
    def data_parallel(self, batch: int) -> Shard:
        """Splits a batch of ``batch`` items over the processes of the run; every gradient becomes their mean."""
    def call(
        self,
        name: str,
        function: Callable[..., Any],
        args: Union[Expr, Sequence[Expr]],
        shape: Sequence[int],
        dtype: _DType = "float32",
        batched: bool = False,
    ) -> Expr:
        """``function(*args)`` as a value of ``shape`` and ``dtype``, called once per point (an external call).

        ``function`` gets NumPy arrays (copies of the arguments' points) and
        returns an array of exactly ``shape`` and ``dtype``; an exception in it
        ends the run with a ``TempoError`` carrying the traceback. With
        ``batched=True`` it always gets a leading batch dimension (the whole
        batch where the compiler batches the call's dimension).
        """
    def mlir(self) -> str:
        """The program as temporal MLIR."""
    def compile(
        self, opt: int = 2, fast_math: bool = False, threads: int = 0, bounds: dict[str, int] | None = None
    ) -> Executable:
        """Compiles once: ``opt`` (0 to 3), ``fast_math``, ``threads`` (0: every core); ``bounds`` specializes."""
    def interpret(self, seed: int | None = None, **arguments: Any) -> dict[str, npt.NDArray[Any]]:
        """Evaluates with the reference interpreter: bounds and inputs as keyword arguments.

        Inputs are taken as ``Executable.run`` takes them (not converted); the
        GIL is released while the interpreter runs.
        """

@final
class Executable:
    """A program compiled once, run many times, from any thread."""

    @property
    def bounds(self) -> list[str]:
        """The program's bound names."""
    @property
    def stop_lengths(self) -> list[list[int]]:
        """Where each data-dependent stop ended in the last run."""
    def run(self, seed: int | None = None, **arguments: Any) -> dict[str, npt.NDArray[Any]]:
        """Runs the compiled code: bounds (ints) and inputs as keyword arguments.

        Inputs are not converted: an array must have the input's dtype (a
        float64 array for a float32 input is a ``TempoError``: convert it
        with ``.astype(np.float32)``); only plain Python numbers take the
        input's dtype. Arrays that are not C-contiguous are copied first;
        read-only arrays are fine (inputs are only read). The GIL is
        released while the compiled code runs; runs of one executable from
        several threads take turns.
        """

@final
class AdamState:
    """The state ``tempo.optim.adam`` declares for a parameter ``w`` (tensors named ``w_m``, ...)."""

    @property
    def m(self) -> Tensor:
        """The first moments ``w_m``."""
    @property
    def v(self) -> Tensor:
        """The second moments ``w_v``."""
    @property
    def beta1_power(self) -> Tensor:
        """``w_beta1_power[i] = beta1 ** (i + 1)``."""
    @property
    def beta2_power(self) -> Tensor:
        """``w_beta2_power[i] = beta2 ** (i + 1)``."""

@final
class Sample:
    """A sampled action with its log-probability and the distribution's entropy, per row."""

    @property
    def action(self) -> Expr:
        """The sampled class of each row (int64), cut from the gradient."""
    @property
    def log_prob(self) -> Expr:
        """The action's log-probability under ``softmax(logits)`` (differentiable)."""
    @property
    def entropy(self) -> Expr:
        """The entropy ``-sum(p log p)`` of each row's distribution."""

@final
class Shard:
    """This process's part of a batch split over the processes of the run (``Program.data_parallel``)."""

    @property
    def rank(self) -> int:
        """This process's rank (0 to ``processes - 1``)."""
    @property
    def processes(self) -> int:
        """The number of processes of the run (1 without a launcher)."""
    @property
    def start(self) -> int:
        """The first item of this process's part of the batch."""
    @property
    def len(self) -> int:
        """The number of items of this process's part."""

def processes() -> Tuple[int, int]:
    """``(rank, processes)`` of this run (``(0, 1)`` without a launcher)."""

def barrier() -> None:
    """Waits until every process of the run gets here."""

def einsum(spec: str, *operands: Expr) -> Expr:
    """A contraction in NumPy's notation: ``einsum("hqd,nhd->hqn", q, keys)``."""

def where(condition: Expr, a: _Operand, b: _Operand) -> Expr:
    """``a`` where ``condition`` holds, else ``b`` (either may be a number)."""

def always() -> Cond:
    """A condition that always holds."""

def maximum(a: _Operand, b: _Operand) -> Expr:
    """The elementwise maximum (one side may be a number)."""

def minimum(a: _Operand, b: _Operand) -> Expr:
    """The elementwise minimum (one side may be a number)."""

def arange(n: int, dtype: _DType = "int64") -> Expr:
    """``[0, 1, ..., n - 1]``: compared with token ids, one-hot rows."""

def constant(
    value: Union[int, float, Sequence[Any], npt.NDArray[Any]], dtype: _DType = "float32", shape: Sequence[int] | None = None
) -> Expr:
    """A constant: a number (one value everywhere, of ``shape``) or a list or array of elements."""

def random_uniform(seed: int, shape: Sequence[int], dtype: _DType = "float32") -> Expr:
    """Seeded uniform values in [0, 1), a pure function of the seed, the point and the element."""

def random_normal(seed: int, shape: Sequence[int], dtype: _DType = "float32") -> Expr:
    """Seeded standard normal values, a pure function of the seed, the point and the element."""

def categorical(logits: Expr, seed: int) -> Sample:
    """Samples a class from ``softmax(logits)`` along the last axis (Gumbel-max, seeded)."""

def categorical_log_prob(logits: Expr, action: Expr) -> Expr:
    """The log-probability of ``action`` under ``softmax(logits)``, per row."""

def sgd(program: Program, param: Tensor, grad: Tensor, iteration: Dim, init: _Operand, lr: float) -> None:
    """Gradient descent: ``param[0] = init``, ``param[i] = param[i-1] - lr * g[i-1]``."""

def momentum(
    program: Program, param: Tensor, grad: Tensor, iteration: Dim, init: _Operand, lr: float, momentum: float
) -> Tensor:
    """Gradient descent with momentum (PyTorch's ``SGD(lr, momentum)``); returns the velocity."""

def adam(
    program: Program,
    param: Tensor,
    grad: Tensor,
    iteration: Dim,
    init: _Operand,
    lr: float = 1e-3,
    betas: Tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> AdamState:
    """Adam as PyTorch computes it; AdamW with ``weight_decay``."""

def adam_epochs(
    program: Program,
    params: Sequence[Tensor],
    grads: Sequence[Tensor],
    iteration: Dim,
    init: _Operand,
    lr: float = 1e-3,
    betas: Tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
) -> list[AdamState]:
    """Adam with several updates (epochs) per iteration, a parameter tensor per epoch."""

def discounted_returns(
    program: Program, name: str, rewards: Tensor, t: Dim, gamma: float, dones: Tensor | None = None
) -> Tensor:
    """Discounted returns ``G[t] = r[t] + gamma (1 - done[t]) G[t+1]``, a new tensor over the rewards' domain."""

def gae(
    program: Program,
    name: str,
    rewards: Tensor,
    values: Tensor,
    t: Dim,
    gamma: float,
    lam: float,
    dones: Tensor | None = None,
) -> Tensor:
    """Generalized advantage estimation, a new tensor over the rewards' domain."""

def normal(mean: Expr, log_sigma: Expr, seed: int) -> Sample:
    """Samples independent normals with ``mean`` and ``log_sigma`` (seeded, reparameterized)."""

def normal_log_prob(action: Expr, mean: Expr, log_sigma: Expr) -> Expr:
    """The log-density of each element of ``action`` under independent normals."""
