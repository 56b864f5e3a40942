//! Building a program: dimensions, inputs, recurrent tensors, branches,
//! outputs; emitting it as temporal-dialect MLIR; running it.

use crate::expr::{Coordinate, Expr, global_map};
use crate::index::{Cond, DimRef, Index};
use crate::site::Site;
use indexmap::IndexMap;
use melior::ir::Module;
use std::fmt;
use std::ops::{Add, Mul, Sub};
use tempo_driver::{Externals, HostArray, RunOptions, RunReport};
use tempo_passes::affine::{AffineExpr, AffineMap};
use tempo_passes::program::{ElementType, NodeKind, PointType};

pub use crate::expr::TensorId;

mod build;

/// A temporal dimension: a variable `name` in `0..bound`, the
/// `number`-th dimension of its program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dim {
    pub(crate) name: String,
    pub(crate) bound: String,
    pub(crate) number: usize,
    /// The number of the program's first dimension with this bound (the
    /// bound's symbol).
    pub(crate) bound_number: usize,
    /// The program's identity.
    pub(crate) program: u64,
}

impl Dim {
    /// The dimension's variable as an index expression.
    pub fn var(&self) -> Index {
        Index::Var(self.reference())
    }
    /// The dimension's bound symbol (`T`) as an index expression.
    pub fn bound(&self) -> Index {
        Index::Bound(DimRef { name: self.bound.clone(), number: self.bound_number, program: self.program })
    }
    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The variable as index expressions name it.
    fn reference(&self) -> DimRef {
        DimRef { name: self.name.clone(), number: self.number, program: self.program }
    }
    /// `var == other`.
    pub fn eq(&self, other: impl Into<Index>) -> Cond {
        self.var().eq(other)
    }
    /// `var >= other`.
    pub fn ge(&self, other: impl Into<Index>) -> Cond {
        self.var().ge(other)
    }
    /// `var > other`.
    pub fn gt(&self, other: impl Into<Index>) -> Cond {
        self.var().gt(other)
    }
    /// `var <= other`.
    pub fn le(&self, other: impl Into<Index>) -> Cond {
        self.var().le(other)
    }
    /// `var < other`.
    pub fn lt(&self, other: impl Into<Index>) -> Cond {
        self.var().lt(other)
    }

    /// The position along this dimension as a value, a scalar of `element`:
    /// `t` at the point `t` (rotary embeddings, step counts), in a
    /// definition of a tensor over this dimension.
    #[track_caller]
    pub fn position(&self, element: ElementType) -> Expr {
        let ty = PointType { shape: Vec::new(), element };
        Expr::checked(NodeKind::Position(self.number), Vec::new(), ty, Site::caller(), Vec::new(), Some(self.program))
    }

    /// This dimension's bound as a value, a scalar of `element` (`1 / T`
    /// is `1.0 / t.bound_value(F32)`).
    #[track_caller]
    pub fn bound_value(&self, element: ElementType) -> Expr {
        let ty = PointType { shape: Vec::new(), element };
        Expr::checked(NodeKind::Bound(self.number), Vec::new(), ty, Site::caller(), Vec::new(), Some(self.program))
    }
}

impl From<&Dim> for Index {
    fn from(d: &Dim) -> Index {
        d.var()
    }
}

impl Sub<i64> for &Dim {
    type Output = Index;
    fn sub(self, k: i64) -> Index {
        self.var() - k
    }
}

impl Add<i64> for &Dim {
    type Output = Index;
    fn add(self, k: i64) -> Index {
        self.var() + k
    }
}

impl Mul<i64> for &Dim {
    type Output = Index;
    fn mul(self, k: i64) -> Index {
        self.var() * k
    }
}

/// A recurrent tensor (input or computed) of a program.
#[derive(Clone, Debug)]
pub struct Tensor {
    pub(crate) id: TensorId,
    pub(crate) name: String,
    pub(crate) domain: Vec<String>,
    /// The program's numbers of the domain's dimensions.
    pub(crate) dims: Vec<usize>,
    /// The program's identity.
    pub(crate) program: u64,
    pub(crate) point: PointType,
}

impl Tensor {
    /// The tensor's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The names of the dimensions of the tensor's domain, in order.
    pub fn domain(&self) -> &[String] {
        &self.domain
    }

    /// The type of each point.
    pub fn point_type(&self) -> &PointType {
        &self.point
    }

    /// The domain's dimensions' names, `[t, b]`.
    fn domain_text(&self) -> String {
        self.domain.join(", ")
    }

    /// The number in the domain of the dimension `dim` names, or why there
    /// is none (`what` says the read).
    fn position_of(&self, dim: &DimRef, what: &str, why: &mut Vec<String>) -> Option<usize> {
        let found = self.dims.iter().position(|&d| d == dim.number).filter(|_| dim.program == self.program);
        if dim.program != self.program {
            why.push(format!("{what} of '{}' indexes dimension '{}' of another program", self.name, dim.name));
        } else if found.is_none() {
            why.push(format!(
                "{what} of '{}' indexes dimension '{}' but '{}' has domain [{}]",
                self.name,
                dim.name,
                self.name,
                self.domain_text()
            ));
        }
        found
    }

    /// Each dimension of `indices` of another program than this tensor's
    /// is an error of the read (`what`).
    fn foreign<'i>(&self, indices: impl IntoIterator<Item = &'i Index>, what: &str, why: &mut Vec<String>) {
        let mut dims = Vec::new();
        indices.into_iter().for_each(|i| i.dims(&mut dims));
        for d in dims.iter().filter(|d| d.program != self.program) {
            why.push(format!("{what} of '{}' uses dimension '{}' of another program", self.name, d.name));
        }
    }

    /// A read of this tensor's point: `index[k]`, where given, at domain
    /// dimension `k`, else the reader's variable of that dimension.
    #[track_caller]
    fn read(&self, index: Vec<Option<Index>>, mut why: Vec<String>) -> Expr {
        self.foreign(index.iter().flatten(), "read", &mut why);
        let results = self
            .dims
            .iter()
            .zip(index.into_iter().chain(std::iter::repeat(None)))
            .map(|(&d, e)| e.map_or(AffineExpr::Dim(d), |e| e.affine()))
            .collect();
        let kind = NodeKind::Read { source: self.id.0, index: global_map(results) };
        Expr::checked(kind, Vec::new(), self.point.clone(), Site::caller(), why, Some(self.program))
    }

    /// A read of this tensor's point at coordinates given by data.
    #[track_caller]
    fn read_at(&self, coords: Vec<Expr>) -> Expr {
        let mut why = Vec::new();
        if coords.len() != self.domain.len() {
            why.push(format!(
                "read through data of '{}' gives {} coordinates, but it has domain [{}]",
                self.name,
                coords.len(),
                self.domain_text()
            ));
        }
        let index = AffineMap {
            num_dims: coords.len(),
            num_symbols: 0,
            results: (0..coords.len()).map(AffineExpr::Dim).collect(),
        };
        let kind = NodeKind::ReadAt { source: self.id.0, index, data: (0..coords.len()).collect() };
        Expr::checked(kind, coords, self.point.clone(), Site::caller(), why, Some(self.program))
    }

    /// A read of a box of this tensor: a point or a range per listed
    /// dimension (the others at the reader's variable); a value with a
    /// leading dimension of dynamic size per range.
    #[track_caller]
    fn read_range(&self, index: Vec<(DimRef, Coordinate)>) -> Expr {
        let mut why = Vec::new();
        let mut coordinates: Vec<Option<Coordinate>> = vec![None; self.dims.len()];
        for (dim, c) in index {
            if let Some(k) = self.position_of(&dim, "range read", &mut why) {
                coordinates[k] = Some(c);
            }
        }
        let ranges = coordinates.iter().filter(|c| matches!(c, Some(Coordinate::Range { .. }))).count();
        let (mut lower, mut upper, mut caps) = (Vec::new(), Vec::new(), Vec::new());
        for ((&d, name), coordinate) in self.dims.iter().zip(&self.domain).zip(coordinates) {
            let is_range = matches!(coordinate, Some(Coordinate::Range { .. }));
            let given = coordinate.is_some();
            let (lo, hi, cap) = match coordinate {
                Some(Coordinate::Range { lower, upper }) => (lower, upper, vec![]),
                Some(Coordinate::Clamped { at_least, at_most }) => (at_least, vec![], at_most),
                Some(Coordinate::Point(p)) => (vec![p], vec![], vec![]),
                None => (vec![], vec![], vec![]),
            };
            self.foreign(lo.iter().chain(&hi).chain(&cap), "range read", &mut why);
            let map = |exprs: &[Index]| global_map(exprs.iter().map(Index::affine).collect());
            if (given && lo.is_empty()) || (is_range && hi.is_empty()) {
                why.push(format!(
                    "range read of '{}' needs at least one lower and one upper bound for dimension '{name}'",
                    self.name
                ));
            }
            lower.push(if lo.is_empty() { global_map(vec![AffineExpr::Dim(d)]) } else { map(&lo) });
            upper.push(map(&hi));
            caps.push(map(&cap));
        }
        let mut shape = vec![tempo_passes::program::DYNAMIC; ranges];
        shape.extend(&self.point.shape);
        let ty = PointType { shape, element: self.point.element };
        let kind = NodeKind::ReadRange { source: self.id.0, lower, upper, caps };
        Expr::checked(kind, Vec::new(), ty, Site::caller(), why, Some(self.program))
    }

    /// Reads the point at `index`, one expression per domain dimension, in
    /// domain order: `x.at([&t - 1])`.
    #[track_caller]
    pub fn at<I: Into<Index>>(&self, index: impl IntoIterator<Item = I>) -> Expr {
        let index: Vec<Option<Index>> = index.into_iter().map(|i| Some(i.into())).collect();
        let mut why = Vec::new();
        if index.len() != self.domain.len() {
            why.push(format!(
                "read of '{}' indexes the wrong number of dimensions but '{}' has domain [{}]",
                self.name,
                self.name,
                self.domain_text()
            ));
        }
        self.read(index, why)
    }

    /// Reads the point whose coordinates are values of the program (a read
    /// through data): one scalar integer expression per domain dimension,
    /// in domain order. `h.at_data([&left.here()])` reads `h[left[n]]`,
    /// the child of node `n` in a tree. Coordinates are checked against
    /// the bounds at run time; a point that needs itself through such
    /// reads is a run-time error.
    #[track_caller]
    pub fn at_data<'e>(&self, coords: impl IntoIterator<Item = &'e Expr>) -> Expr {
        self.read_at(coords.into_iter().cloned().collect())
    }

    /// Reads the point at the reader's own variables of the same names
    /// (`x.here()` in a definition over `t` reads `x[t]`).
    #[track_caller]
    pub fn here(&self) -> Expr {
        self.read(Vec::new(), Vec::new())
    }

    /// Reads the range `lo:hi` of a one-dimensional tensor (`k.range(0, &t + 1)`
    /// is the prefix up to `t`): a value with a leading dimension of dynamic size.
    #[track_caller]
    pub fn range(&self, lo: impl Into<Index>, hi: impl Into<Index>) -> Expr {
        let mut index = Vec::new();
        match (self.domain.first(), self.dims.first()) {
            (Some(name), Some(&number)) => {
                index.push((DimRef { name: name.clone(), number, program: self.program }, Coordinate::range(lo, hi)))
            }
            _ => {
                let why = format!("range read of '{}' needs a dimension, but '{}' has domain []", self.name, self.name);
                return Expr::checked(NodeKind::Rank, Vec::new(), self.point.clone(), Site::caller(), vec![why], None);
            }
        }
        self.read_range(index)
    }

    /// Reads a box: each listed dimension is a point or a (clamped) range;
    /// the others default to the reader's variable of the same name.
    #[track_caller]
    pub fn read_box<'d>(&self, index: impl IntoIterator<Item = (&'d Dim, Coordinate)>) -> Expr {
        self.read_range(index.into_iter().map(|(d, c)| (d.reference(), c)).collect())
    }

    /// Reads with some dimensions indexed explicitly; the others default to
    /// the reader's variable of the same name.
    #[track_caller]
    pub fn at_dims<'d, I: Into<Index>>(&self, index: impl IntoIterator<Item = (&'d Dim, I)>) -> Expr {
        let mut why = Vec::new();
        let mut coordinates = vec![None; self.dims.len()];
        for (d, e) in index {
            if let Some(k) = self.position_of(&d.reference(), "read", &mut why) {
                coordinates[k] = Some(e.into());
            }
        }
        self.read(coordinates, why)
    }
}

/// How a tensor is declared.
#[derive(Clone, Copy)]
enum DeclKind {
    /// `temporal.tensor`: defined by branches.
    Tensor,
    /// `temporal.input`: given at run time.
    Input,
    /// `temporal.grad`: the gradient of `of` with respect to `wrt`.
    Grad { of: TensorId, wrt: TensorId },
}

struct TensorDecl {
    tensor: Tensor,
    kind: DeclKind,
    location: Site,
}

struct Define {
    target: TensorId,
    when: Cond,
    value: Expr,
    location: Site,
}

/// Errors found while emitting or running a program, one line each
/// (`file:line:col: error: ...` where a location is known).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error(pub Vec<String>);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for Error {}

/// A recurrent-tensor program under construction.
///
/// ```
/// use tempo::{Program, Cond, i64s};
/// let mut p = Program::new();
/// let t = p.dim("t", "T");
/// let x = p.tensor("x", &[&t], i64s(&[]));
/// p.define(&x, t.eq(0), tempo::Expr::splat(0.0, i64s(&[])));
/// p.define(&x, Cond::always(), x.at([&t - 1]) + 1.0);
/// p.output(&x);
/// let out = p.runner().bound("T", 5).run().unwrap();
/// assert_eq!(out[0].data, tempo::Data::I64(vec![0, 1, 2, 3, 4]));
/// ```
pub struct Program {
    /// This program's identity, which its handles carry: a handle of
    /// another program is refused, at the line that gave it.
    id: u64,
    /// Handles of other programs given to this one's methods: the errors,
    /// located, said when the program is built.
    misuse: Vec<String>,
    dims: Vec<Dim>,
    tensors: Vec<TensorDecl>,
    defines: Vec<Define>,
    outputs: Vec<TensorId>,
    externals: Externals,
    /// Data-dependent stops: the tensor that ends the dimension, where.
    stops: Vec<(TensorId, String, Site)>,
    /// Data-parallel training ([`Program::data_parallel`]): every
    /// gradient is the all-reduced mean of the processes' gradients.
    data_parallel: bool,
}

impl Default for Program {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        Program {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            misuse: Vec::new(),
            dims: Vec::new(),
            tensors: Vec::new(),
            defines: Vec::new(),
            outputs: Vec::new(),
            externals: Externals::default(),
            stops: Vec::new(),
            data_parallel: false,
        }
    }
}

/// This process's part of a batch split across the processes of a run
/// ([`Program::data_parallel`]): items `start .. start + len` of the
/// whole run's batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This process's rank (0 to `processes - 1`).
    pub rank: usize,
    /// The number of processes of the run (1 without a launcher).
    pub processes: usize,
    /// The first item of this process's part of the batch.
    pub start: usize,
    /// The number of items of this process's part (the batch divided by
    /// the number of processes).
    pub len: usize,
}

/// The processes of this run: this one's rank and their number (rank 0 of
/// 1 for a process started without an MPI launcher). Under `mpirun`, the
/// first call loads and initializes MPI (`tempo_runtime::mpi`).
pub fn processes() -> Result<(usize, usize), Error> {
    let world = tempo_runtime::mpi::world().map_err(|e| Error(vec![format!("error: {e}")]))?;
    Ok((world.rank as usize, world.size as usize))
}

/// Waits until every process of the run gets here (nothing in a run of
/// one process): for example between compiling and running, so that a
/// run's timing leaves out another process's longer compilation.
pub fn barrier() -> Result<(), Error> {
    tempo_runtime::mpi::barrier().map_err(|e| Error(vec![format!("error: {e}")]))
}

/// Ends the other processes of the run after an error in this one, so that
/// none waits forever in a collective this one will not reach
/// (`MPI_Abort`; nothing in a run of one process). For a program's `main`
/// before it exits with an error.
pub fn abort_processes(code: i32) {
    tempo_runtime::mpi::abort_others(code)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !matches!(s, "mod" | "floordiv" | "ceildiv" | "symbol")
}

impl Program {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    /// The bound names of the program's dimensions, in order.
    pub fn bounds(&self) -> Vec<String> {
        self.dims.iter().map(|d| d.bound.clone()).collect()
    }

    /// Each input's name and point type, in declaration order.
    pub fn inputs(&self) -> Vec<(String, PointType)> {
        self.tensors
            .iter()
            .filter(|d| matches!(d.kind, DeclKind::Input))
            .map(|d| (d.tensor.name.clone(), d.tensor.point.clone()))
            .collect()
    }

    /// Declares a dimension `name` ranging over `0..bound`. Names must be
    /// identifiers (letters, digits, `_`).
    pub fn dim(&mut self, name: &str, bound: &str) -> Dim {
        let number = self.dims.len();
        let bound_number = self.dims.iter().position(|d| d.bound == bound).unwrap_or(number);
        let dim = Dim { name: name.into(), bound: bound.into(), number, bound_number, program: self.id };
        self.dims.push(dim.clone());
        dim
    }

    /// The declared dimension called `name`.
    pub(crate) fn dim_named(&self, name: &str) -> Option<Dim> {
        self.dims.iter().find(|d| d.name == name).cloned()
    }

    #[track_caller]
    fn declare(&mut self, name: &str, domain: &[&Dim], point: PointType, kind: DeclKind) -> Tensor {
        for d in domain {
            self.check(d.program, &format!("the domain of '{name}' has dimension '{}'", d.name));
        }
        let names = domain.iter().map(|d| d.name.clone()).collect();
        self.declare_over(name, names, domain.iter().map(|d| d.number).collect(), point, kind)
    }

    /// Declares a tensor over the dimensions numbered `dims`, named `domain`.
    #[track_caller]
    fn declare_over(
        &mut self,
        name: &str,
        domain: Vec<String>,
        dims: Vec<usize>,
        point: PointType,
        kind: DeclKind,
    ) -> Tensor {
        let id = TensorId(self.tensors.len());
        let tensor = Tensor { id, name: name.into(), domain, dims, program: self.id, point };
        self.tensors.push(TensorDecl { tensor: tensor.clone(), kind, location: Site::caller() });
        tensor
    }

    /// Declares an input over `domain` with points of type `point`.
    #[track_caller]
    pub fn input(&mut self, name: &str, domain: &[&Dim], point: PointType) -> Tensor {
        self.declare(name, domain, point, DeclKind::Input)
    }

    /// Declares a recurrent tensor over `domain` with points of type `point`.
    #[track_caller]
    pub fn tensor(&mut self, name: &str, domain: &[&Dim], point: PointType) -> Tensor {
        self.declare(name, domain, point, DeclKind::Tensor)
    }

    /// Declares `name`, the gradient of `of` with respect to `wrt`
    /// (`temporal.grad`): a tensor over `wrt`'s domain with `wrt`'s point
    /// type whose point `q` is the derivative of the sum of all points of
    /// `of` with respect to `wrt[q]`, zero where no path joins them.
    ///
    /// `of` must have scalar float points (a loss `loss[t]` is summed over
    /// `t`); `wrt` may be an input or a computed tensor, of floats.
    /// Gradients pass through every point read (`t - 1`, `t + 1`,
    /// `T - 1 - t`, `2t`, clamped `min`/`max`, weights read at every
    /// step), a tensor's own past and future (back-propagation through
    /// time) and conditional branches (only the branch that defines a
    /// point passes a gradient); several reads of one point add up;
    /// [`Expr::stop_gradient`] cuts a path. The result is read like any
    /// tensor and may be an output; it has no branches of its own
    /// (`temporal-autodiff` derives them when the program is compiled or
    /// interpreted).
    ///
    /// A training loop reads it through `stop_gradient` at the previous
    /// iteration (`W[i] = W[i-1] - lr * stop_gradient(g[i-1])` with
    /// `g = grad(loss, W)`): `W`'s reads of its own points then pass no
    /// gradient, so `g[i]` is the gradient of iteration `i`'s loss through
    /// `W[i]` ([`crate::optim`] builds such updates).
    ///
    /// Not yet differentiable (a located error when the program is
    /// compiled or interpreted): range reads (`x[0:t+1]`, windows,
    /// `x[t:T]`) on the gradient's path, `mod`/`floordiv` indices,
    /// `slice_at`, attention, external calls, gradients of gradients.
    ///
    /// ```
    /// use tempo::{Cond, Program, f64s};
    /// let mut p = Program::new();
    /// let t = p.dim("t", "T");
    /// let w = p.input("w", &[], f64s(&[]));
    /// let y = p.tensor("y", &[&t], f64s(&[]));
    /// p.define(&y, t.eq(0), w.here());
    /// p.define(&y, Cond::always(), y.at([&t - 1]) * w.here()); // y[t] = w^(t+1)
    /// let g = p.grad("g", &y, &w); // sum over t of (t+1) w^t
    /// p.output(&g);
    /// let w0 = tempo::HostArray { name: "w".into(), shape: vec![], data: tempo::Data::F64(vec![2.0]) };
    /// let out = p.runner().bound("T", 3).input(w0).interpret().unwrap();
    /// assert_eq!(out[0].data.get_f64(0), 1.0 + 2.0 * 2.0 + 3.0 * 4.0);
    /// ```
    #[track_caller]
    pub fn grad(&mut self, name: &str, of: &Tensor, wrt: &Tensor) -> Tensor {
        self.check(of.program, &format!("the gradient '{name}' is of '{}'", of.name));
        self.check(wrt.program, &format!("the gradient '{name}' is with respect to '{}'", wrt.name));
        let kind = DeclKind::Grad { of: of.id, wrt: wrt.id };
        self.declare_over(name, wrt.domain.clone(), wrt.dims.clone(), wrt.point.clone(), kind)
    }

    /// Data-parallel training over the processes of the run (`mpirun -np
    /// P ...`, each process running this program): the batch dimension,
    /// of `batch` items over the whole run, is split into equal parts, one
    /// per process, and this process's part is returned (the program is
    /// then written for `len` items: each process feeds its own). Every
    /// gradient of the program ([`Program::grad`], declared before or
    /// after) becomes the mean over the processes of their gradients
    /// (`temporal.grad`'s `all_reduce = "mean"`): with a loss that is a mean
    /// over the batch, the gradient of the whole batch's mean loss, so
    /// parameters that start equal (same initial values, same seed) stay
    /// equal on every process. `temporal-autodiff` sends the gradients of
    /// one loss at one point (one iteration) in one fused buffer: one
    /// all-reduce, one `MPI_Allreduce`, per iteration.
    ///
    /// Started without a launcher, the run is one process holding the
    /// whole batch. Refuses a batch that does not split evenly (the mean of
    /// unequal parts' means is not the batch's mean).
    pub fn data_parallel(&mut self, batch: usize) -> Result<Shard, Error> {
        let (rank, processes) = processes()?;
        if batch == 0 || batch % processes != 0 {
            return Err(Error(vec![format!(
                "error: data_parallel: a batch of {batch} does not split evenly over {processes} processes"
            )]));
        }
        self.data_parallel = true;
        let len = batch / processes;
        Ok(Shard { rank, processes, start: rank * len, len })
    }

    /// Adds a branch: where `when` holds (and no earlier branch of `tensor`
    /// does), the point is `value`.
    #[track_caller]
    pub fn define(&mut self, tensor: &Tensor, when: Cond, value: Expr) {
        self.check(tensor.program, &format!("a branch defines '{}'", tensor.name));
        for d in when.dims() {
            self.check(
                d.program,
                &format!("the condition of a branch of '{}' uses dimension '{}'", tensor.name, d.name),
            );
        }
        self.defines.push(Define { target: tensor.id, when, value, location: Site::caller() });
    }

    /// Adds a branch that holds wherever no earlier one does.
    #[track_caller]
    pub fn otherwise(&mut self, tensor: &Tensor, value: Expr) {
        self.define(tensor, Cond::always(), value)
    }

    /// The discounted sum of the future of a reward tensor over `dim`:
    /// `G[t] = sum(r[t:T] * d[0:T-t])` with `d[i] = gamma^i` (itself a
    /// recurrence over `dim`). `rewards` must have the domain `[dim]`; the
    /// result is a new tensor `name` over `[dim]`.
    #[track_caller]
    pub fn discounted_sum(&mut self, name: &str, rewards: &Tensor, dim: &Dim, gamma: f64) -> Tensor {
        let scalar = PointType { shape: vec![], element: rewards.point.element };
        let discounts = self.tensor(&format!("{name}_discounts"), &[dim], scalar.clone());
        self.define(&discounts, dim.eq(0), Expr::splat(1.0, scalar.clone()));
        self.otherwise(&discounts, discounts.at([dim - 1]) * gamma);
        let returns = self.tensor(name, &[dim], scalar);
        let future = rewards.range(dim.var(), dim.bound());
        let weights = discounts.range(0, dim.bound() - dim.var());
        self.otherwise(&returns, (future * weights).sum(0));
        returns
    }

    /// Registers the callback that [`Expr::call`]s of `name` run, once per
    /// point: it gets the argument arrays and returns the result array (of
    /// the declared type; anything else stops the run with an error).
    pub fn external(
        &mut self,
        name: &str,
        callback: impl Fn(&[HostArray]) -> Result<HostArray, String> + Send + Sync + 'static,
    ) {
        self.externals.register(name, callback);
    }

    /// Registers `name` like [`Program::external`], as a callback on the
    /// call's own buffers, without copies: it gets each argument's declared
    /// type and bytes (row-major; valid only during the call) and the
    /// result's declared type and buffer, which it fills whole. Front ends
    /// that convert values themselves use it (the Python package).
    pub fn external_raw(
        &mut self,
        name: &str,
        callback: impl Fn(&[(&PointType, &[u8])], &PointType, &mut [u8]) -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.externals.register_raw(name, callback);
    }

    /// Marks `tensor` as an output (its whole domain).
    #[track_caller]
    pub fn output(&mut self, tensor: &Tensor) {
        self.check(tensor.program, &format!("the output '{}'", tensor.name));
        self.outputs.push(tensor.id);
    }

    /// Ends dimension `dim` where `done` (scalar `i1` points over `dim`)
    /// first holds: its bound is then the most it may take, and the
    /// program means what it means with the length found as the bound
    /// (`temporal.stop`: decode until an end token, an episode until
    /// `done`). What `done` is computed from may not use the bound nor read
    /// ahead along `dim`. When `done` is over other dimensions too (a
    /// ragged stop, `done[b, t]`), each of their points has its own length:
    /// tensors over them see it as the bound, outputs are as long as the
    /// longest with zeros past each point's length, and the compiled run
    /// reports the lengths (`RunReport::stop_lengths`).
    #[track_caller]
    pub fn stop(&mut self, done: &Tensor, dim: &Dim) {
        self.check(done.program, &format!("the stop's tensor '{}'", done.name));
        self.check(dim.program, &format!("the stopped dimension '{}'", dim.name));
        self.stops.push((done.id, dim.name.clone(), Site::caller()));
    }

    /// Records, at the caller's line, a handle of another program than
    /// this one (`program`, its identity) given as `what`.
    #[track_caller]
    fn check(&mut self, program: u64, what: &str) {
        if program != self.id {
            self.misuse.push(format!(
                "{}: error: {what} of another program (handles belong to the program that made them)",
                plain_location(&Site::caller())
            ));
        }
    }

    /// The program as temporal-dialect MLIR (generic form, with the
    /// locations of the lines that built it), readable by `tempo-opt` and
    /// by stock `mlir-opt --irdl-file=...`: the module the compiler gets,
    /// printed by MLIR.
    pub fn to_mlir(&self) -> Result<String, Error> {
        let context = tempo_dialects::create_context();
        let module = self.build_module(&context)?;
        let flags = melior::ir::operation::OperationPrintingFlags::new()
            .enable_debug_info(true, false)
            .print_generic_operation_form();
        use melior::ir::operation::OperationLike;
        module
            .as_operation()
            .to_string_with_flags(flags)
            .map(|text| text + "\n")
            .map_err(|e| Error(vec![format!("error: {e}")]))
    }

    /// Starts configuring a run (bounds, inputs, seed).
    pub fn runner(&self) -> Runner<'_> {
        Runner {
            program: self,
            bounds: IndexMap::new(),
            inputs: Vec::new(),
            seed: None,
            compile: Default::default(),
            dump_on_error: None,
            front: tempo_driver::Front::Rust,
        }
    }
}

pub(crate) fn plain_location(location: &Site) -> String {
    format!("{}:{}:{}", location.file(), location.line(), location.column())
}

/// A program compiled once ([`Runner::compile`]), run many times.
///
/// Threads: a `Compiled` may move to another thread (`Send`) but is not
/// shared (`!Sync`): its compiled code keeps state between runs (its
/// globals), so runs must take turns. To run one from several threads,
/// put it in a `Mutex` (as the C API and Python do for their executables):
///
/// ```no_run
/// # use std::sync::{Arc, Mutex};
/// # let compiled: tempo::Compiled = unimplemented!();
/// let shared = Arc::new(Mutex::new(compiled));
/// let worker = Arc::clone(&shared);
/// std::thread::spawn(move || worker.lock().unwrap().run(&[("T", 5)], &[]));
/// ```
/// Sharing it without one is refused when the caller is compiled:
/// ```compile_fail
/// fn shared<T: Sync>(_: &T) {}
/// fn refused(compiled: &tempo::Compiled) {
///     shared(compiled);
/// }
/// ```
pub struct Compiled {
    compiled: tempo_driver::CompiledProgram,
    /// The options compiled with (externals, target, threads).
    base: RunOptions,
}

// SAFETY: a `Compiled` owns its MLIR context, module and JIT'd code, which
// are tied to no thread; it holds no `Rc` (callbacks are `Arc`s of `Send +
// Sync` functions). Moving it to another thread is sound; sharing it is
// not offered (`!Sync`), so two threads never use it at once.
unsafe impl Send for Compiled {}

impl Compiled {
    /// Runs the compiled code at `bounds` (every bound of the program) on
    /// `inputs` (every input of the program, by name).
    pub fn run(&self, bounds: &[(&str, i64)], inputs: &[HostArray]) -> Result<Vec<HostArray>, Error> {
        self.run_with_report(bounds, inputs, None).map(|(outputs, _)| outputs)
    }

    /// Like [`Compiled::run`], with random inputs from `seed` where an input
    /// is not given, and the run's report (its `compile` is the one
    /// compilation's).
    pub fn run_with_report(
        &self,
        bounds: &[(&str, i64)],
        inputs: &[HostArray],
        seed: Option<u64>,
    ) -> Result<(Vec<HostArray>, RunReport), Error> {
        let mut options = self.base.clone();
        options.bounds = bounds.iter().map(|(name, value)| (name.to_string(), *value)).collect();
        options.inputs = inputs.iter().map(|a| (a.name.clone(), a.clone())).collect();
        options.seed = seed;
        self.compiled.run(&options).map_err(Error)
    }

    /// Like [`Compiled::run_with_report`], with inputs read in place from
    /// memory the caller owns (`views`, by tensor name: not copied) and
    /// outputs written into the caller's memory (`outputs`, by name; those
    /// come back with their shape and no data).
    ///
    /// # Safety
    /// Each view's `data` must point at its `shape`'s elements of its type,
    /// row-major, valid and unchanged until this returns; each output's at
    /// room for as many, not otherwise used until this returns.
    pub unsafe fn run_in_place(
        &self,
        bounds: &[(&str, i64)],
        views: Vec<(String, tempo_driver::ArrayView)>,
        outputs: Vec<(String, tempo_driver::ArrayViewMut)>,
        seed: Option<u64>,
    ) -> Result<(Vec<HostArray>, RunReport), Error> {
        let mut options = self.base.clone();
        options.bounds = bounds.iter().map(|(name, value)| (name.to_string(), *value)).collect();
        options.inputs = IndexMap::new();
        options.input_views = views.into_iter().collect();
        options.output_views = outputs.into_iter().collect();
        options.seed = seed;
        self.compiled.run(&options).map_err(Error)
    }

    /// The program's bound names, in dimension order.
    pub fn bounds(&self) -> Result<Vec<String>, Error> {
        self.compiled.executable().bounds().map_err(Error)
    }

    /// Each output's name, point type and domain (dimension numbers, in
    /// the order of [`Compiled::bounds`]), in output order.
    pub fn outputs(&self) -> Result<Vec<(String, PointType, Vec<usize>)>, Error> {
        Ok(self.compiled.executable().interface().map_err(Error)?.1)
    }

    /// Each input's name, point type and domain, in declaration order.
    pub fn inputs(&self) -> Result<Vec<(String, PointType, Vec<usize>)>, Error> {
        Ok(self.compiled.executable().interface().map_err(Error)?.0)
    }
}

/// Configures and performs a run of a [`Program`].
pub struct Runner<'p> {
    program: &'p Program,
    bounds: IndexMap<String, i64>,
    inputs: Vec<HostArray>,
    seed: Option<u64>,
    compile: tempo_driver::CompileOptions,
    dump_on_error: Option<std::path::PathBuf>,
    front: tempo_driver::Front,
}

impl Runner<'_> {
    /// Sets a bound value.
    pub fn bound(mut self, name: &str, value: i64) -> Self {
        self.bounds.insert(name.into(), value);
        self
    }
    /// Gives an input array (its `name` says which input).
    pub fn input(mut self, array: HostArray) -> Self {
        self.inputs.push(array);
        self
    }
    /// Seeds random values for inputs not given.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// The temporal optimization level (0 to 3, default 2: every exact
    /// pass; 3 adds rules that may change float rounding).
    pub fn optimize(mut self, level: u8) -> Self {
        self.compile.level = level;
        self
    }
    /// Leaves a temporal optimization pass out (`"temporal-simplify"`), or
    /// the lowering's fusion (`"fusion"`).
    pub fn disable_pass(mut self, name: &str) -> Self {
        self.compile.disabled.push(name.to_string());
        self
    }
    /// A memory budget in bytes at the run's bounds: at level 2, softmax
    /// attention over ranges whose temporaries could exceed it is tiled
    /// into blocks (changing float rounding); where the stores exceed it,
    /// tensors a forward loop writes and a backward loop reads back are
    /// swapped to a temporary file block by block (exact).
    pub fn memory_budget(mut self, bytes: u64) -> Self {
        self.compile.memory_budget = Some(bytes);
        self
    }

    /// Fast math for compiled runs (as `tempo-run --fast-math`): fused
    /// multiply-add, f32 exp, tanh and sigmoid as polynomials (within 8
    /// ulps), reassociated float reductions and large products through the
    /// library GEMM. Off (the default), compiled results are bit-exact with
    /// the interpreter's.
    pub fn fast_math(mut self, on: bool) -> Self {
        self.compile.fast_math = on;
        self
    }
    /// Threads of the compiled code's parallel loops (as `tempo-run
    /// --threads`): 0 (the default) one per core, 1 no parallel loops.
    pub fn threads(mut self, threads: usize) -> Self {
        self.compile.threads = threads;
        self
    }

    /// Where a compiler fault (generated code MLIR refuses, reported at the
    /// program's op it lowers) writes the generated module its message
    /// names; without it, the system's temporary directory.
    pub fn dump_on_error(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.dump_on_error = Some(dir.into());
        self
    }

    /// Runs on an NVIDIA GPU (`sm_90`) instead of the CPU: an error where
    /// there is no CUDA driver or device.
    pub fn on_gpu(mut self) -> Self {
        self.compile.target = tempo_driver::Target::cuda(90);
        self
    }
    /// Runs on `target`: another GPU architecture or block size
    /// (`Target::Cuda { chip: 80, threads_per_block: 128 }`), or the GPU
    /// lowering's loops on the CPU (`Target::GpuLoopsOnCpu`).
    pub fn target(mut self, target: tempo_driver::Target) -> Self {
        self.compile.target = target;
        self
    }

    fn options(&self) -> RunOptions {
        RunOptions {
            front: self.front,
            bounds: self.bounds.clone(),
            inputs: self.inputs.iter().map(|a| (a.name.clone(), a.clone())).collect(),
            input_views: IndexMap::new(),
            output_views: IndexMap::new(),
            seed: self.seed,
            source_name: "<program>".into(),
            externals: self.program.externals.clone(),
            dump_object: None,
            // The runner's bounds are those a compilation specializes for.
            compile: tempo_driver::CompileOptions { bounds: self.bounds.clone(), ..self.compile.clone() },
            dump_on_error: self.dump_on_error.clone(),
            pass_timings: false,
            verify_each: false,
        }
    }

    fn with_module<R>(
        &self,
        f: impl FnOnce(&melior::Context, &mut Module) -> Result<R, Vec<String>>,
    ) -> Result<R, Error> {
        melior::utility::register_all_passes();
        let context = tempo_dialects::create_context();
        let mut module = self.program.build_module(&context)?;
        f(&context, &mut module).map_err(Error)
    }

    /// Phrases messages for another front end over this API (the Python
    /// package): what its users pass, not Rust methods.
    #[doc(hidden)]
    pub fn front(mut self, front: tempo_driver::Front) -> Self {
        self.front = front;
        self
    }

    /// Compiles the program once, to run it many times with new bounds and
    /// inputs ([`Compiled::run`]) without compiling again. The runner's
    /// bounds, if any, are those the size-dependent optimizations (a memory
    /// budget) plan for; its inputs and seed are not used.
    pub fn compile(&self) -> Result<Compiled, Error> {
        let options = self.options();
        let program = self.program;
        let compiled =
            tempo_driver::CompiledProgram::build(|context| program.build_module(context).map_err(|e| e.0), &options)
                .map_err(Error)?;
        Ok(Compiled { compiled, base: RunOptions { inputs: IndexMap::new(), ..options } })
    }

    /// Compiles the program to native code and runs it.
    pub fn run(&self) -> Result<Vec<HostArray>, Error> {
        let options = self.options();
        self.with_module(|context, module| tempo_driver::run_module(context, module, &options))
    }

    /// Compiles and runs the program, also reporting compile and execution
    /// times, each tensor's store and the peak bytes of live stores.
    pub fn run_with_report(&self) -> Result<(Vec<HostArray>, RunReport), Error> {
        let options = self.options();
        self.with_module(|context, module| tempo_driver::run_module_timed(context, module, &options))
    }

    /// Evaluates the program with the reference interpreter.
    pub fn interpret(&self) -> Result<Vec<HostArray>, Error> {
        let options = self.options();
        self.with_module(|_, module| tempo_driver::interpret_module(module, &options))
    }

    /// Evaluates the program with the reference interpreter once for each
    /// set of inputs, each set given after the runner's own inputs (an
    /// array replaces the runner's of the same name). The program is
    /// emitted, parsed and prepared once, so a sweep over inputs (finite
    /// differences, say) costs one evaluation per set rather than one MLIR
    /// context per set (about 20 ms). The results come in the sets' order;
    /// the first error stops the sweep.
    pub fn interpret_each(&self, sets: &[Vec<HostArray>]) -> Result<Vec<Vec<HostArray>>, Error> {
        let base = self.options();
        self.with_module(|_, module| {
            sets.iter()
                .map(|set| {
                    let mut options = base.clone();
                    for array in set {
                        options.inputs.insert(array.name.clone(), array.clone());
                    }
                    tempo_driver::interpret_module(module, &options)
                })
                .collect()
        })
    }
}
