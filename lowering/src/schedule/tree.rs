//! A nest as a tree of loops ([`Step`]), the one form every consumer of a
//! schedule walks (the schedule level's IR, the printed schedule, the
//! lowering, the point checks), and what store selection and the legality
//! checks ask of it ([`Layout`]: the loops around each tensor, how many of
//! them two tensors share an iteration of, and the order of computation).
//!
//! A plain nest (`inner` empty) is one loop per dimension of `dims`, its
//! body in order, a shallower tensor between deeper ones closing the inner
//! loops (they open again after it). A sequence nest (`inner` not empty)
//! is the loops over `dims`, one inside the other, around its inner nests
//! one after the other; each inner nest starts with the same loops and
//! goes on with its own (so a loop over `i` can hold a forward loop over
//! `t` and then a backward one).

use super::{Nest, depth};
use std::collections::HashMap;
use tempo_passes::program::Program;

/// One step of a schedule: computing a tensor's point in the enclosing
/// loops, or a loop over a dimension in a direction around further steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Compute(usize),
    Loop { dim: usize, forward: bool, body: Vec<Step> },
}

impl Nest {
    /// A sequence nest: loops over `dims` around `inner` (each inner nest
    /// begins with the same loops in the same directions). The body is the
    /// inner nests' bodies, in order.
    pub fn sequence(dims: Vec<usize>, forward: Vec<bool>, inner: Vec<Nest>) -> Nest {
        let body = inner.iter().flat_map(|n| n.body.iter().copied()).collect();
        Nest { dims, forward, body, inner, lags: Default::default() }
    }

    /// The nest as a tree of loops.
    pub fn steps(&self, program: &Program) -> Vec<Step> {
        self.steps_from(program, 0)
    }

    /// The steps inside the loops `dims[..level]`, which are open.
    fn steps_from(&self, program: &Program, level: usize) -> Vec<Step> {
        if self.inner.is_empty() {
            return plain_steps(program, self, &self.body, level);
        }
        let k = self.dims.len();
        let mut body: Vec<Step> = self.inner.iter().flat_map(|n| n.steps_from(program, k)).collect();
        for l in (level..k).rev() {
            body = vec![Step::Loop { dim: self.dims[l], forward: self.forward[l], body }];
        }
        body
    }

    /// The nest whose tree is `step` (as read back from IR): a plain nest
    /// where one has that tree, otherwise a sequence nest around the body
    /// of the first loop holding more than one step.
    pub fn from_step(program: &Program, step: &Step) -> Nest {
        from_steps(program, std::slice::from_ref(step), &[], &[])
    }

    /// The innermost plain nest holding tensor `t`, to change.
    pub fn plain_nest_of_mut(&mut self, t: usize) -> Option<&mut Nest> {
        if self.inner.is_empty() {
            return self.body.contains(&t).then_some(self);
        }
        self.inner.iter_mut().find_map(|n| n.plain_nest_of_mut(t))
    }

    /// The innermost plain nest holding tensor `t` (this nest when it is
    /// plain), if `t` is in the nest.
    pub fn plain_nest_of(&self, t: usize) -> Option<&Nest> {
        if self.inner.is_empty() {
            return self.body.contains(&t).then_some(self);
        }
        self.inner.iter().find_map(|n| n.plain_nest_of(t))
    }
}

/// The steps of a plain nest's `items` (the tensors inside the loops
/// `nest.dims[..level]`, in body order): tensors of that depth in place,
/// each run of deeper ones in one loop over `nest.dims[level]`.
fn plain_steps(program: &Program, nest: &Nest, items: &[usize], level: usize) -> Vec<Step> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let close = |run: &mut Vec<usize>, out: &mut Vec<Step>| {
        if !run.is_empty() {
            let body = plain_steps(program, nest, run, level + 1);
            out.push(Step::Loop { dim: nest.dims[level], forward: nest.forward[level], body });
            run.clear();
        }
    };
    for &t in items {
        // A tensor no deeper than the loops open here (structure checks
        // refuse shallower ones) is computed in place.
        if depth(program, t) <= level || level >= nest.dims.len() {
            close(&mut run, &mut out);
            out.push(Step::Compute(t));
        } else {
            run.push(t);
        }
    }
    close(&mut run, &mut out);
    out
}

/// The nest whose steps inside the open loops `dims` (directions
/// `forward`) are `steps`.
fn from_steps(program: &Program, steps: &[Step], dims: &[usize], forward: &[bool]) -> Nest {
    if let Some(plain) = plain_from_steps(program, steps, dims, forward) {
        return plain;
    }
    if let [Step::Loop { dim, forward: f, body }] = steps {
        let mut dims = dims.to_vec();
        let mut directions = forward.to_vec();
        dims.push(*dim);
        directions.push(*f);
        return from_steps(program, body, &dims, &directions);
    }
    let inner = steps.iter().map(|s| from_steps(program, std::slice::from_ref(s), dims, forward)).collect();
    Nest::sequence(dims.to_vec(), forward.to_vec(), inner)
}

/// The plain nest whose steps inside the open loops `dims` are `steps`, if
/// there is one: one dimension and direction per loop depth, and the body
/// in order gives the same loops back (adjacent loops at one depth would
/// merge). Tensors not at their depth make a plain nest too (without the
/// comparison), which the structure checks refuse with a message.
fn plain_from_steps(program: &Program, steps: &[Step], dims: &[usize], forward: &[bool]) -> Option<Nest> {
    fn walk(
        program: &Program,
        steps: &[Step],
        level: usize,
        loops: &mut Vec<(usize, bool)>,
        body: &mut Vec<usize>,
        misplaced: &mut bool,
    ) -> bool {
        for step in steps {
            match step {
                Step::Compute(t) => {
                    *misplaced |= depth(program, *t) != level;
                    body.push(*t);
                }
                Step::Loop { dim, forward, body: inner } => {
                    match loops.get(level) {
                        Some(&known) if known != (*dim, *forward) => return false,
                        Some(_) => {}
                        None => loops.push((*dim, *forward)),
                    }
                    if !walk(program, inner, level + 1, loops, body, misplaced) {
                        return false;
                    }
                }
            }
        }
        true
    }
    let mut loops: Vec<(usize, bool)> = dims.iter().copied().zip(forward.iter().copied()).collect();
    let (mut body, mut misplaced) = (Vec::new(), false);
    if !walk(program, steps, dims.len(), &mut loops, &mut body, &mut misplaced) {
        return None;
    }
    let nest = Nest {
        dims: loops.iter().map(|l| l.0).collect(),
        forward: loops.iter().map(|l| l.1).collect(),
        body,
        inner: Vec::new(),
        lags: Default::default(),
    };
    (misplaced || nest.steps_from(program, dims.len()) == steps).then_some(nest)
}

/// Where each tensor of a nest is computed: its place in the order of
/// computation and the loops around it (an id per loop of the tree, its
/// dimension and direction), outer to inner.
pub(crate) struct Layout {
    position: HashMap<usize, usize>,
    loops: HashMap<usize, Vec<(usize, usize, bool)>>,
}

impl Layout {
    pub(crate) fn of(program: &Program, nest: &Nest) -> Layout {
        fn walk(steps: &[Step], path: &mut Vec<(usize, usize, bool)>, next_id: &mut usize, layout: &mut Layout) {
            for step in steps {
                match step {
                    Step::Compute(t) => {
                        layout.position.insert(*t, layout.position.len());
                        layout.loops.insert(*t, path.clone());
                    }
                    Step::Loop { dim, forward, body } => {
                        *next_id += 1;
                        path.push((*next_id, *dim, *forward));
                        walk(body, path, next_id, layout);
                        path.pop();
                    }
                }
            }
        }
        let mut layout = Layout { position: HashMap::new(), loops: HashMap::new() };
        walk(&nest.steps(program), &mut Vec::new(), &mut 0, &mut layout);
        layout
    }

    /// The place of `t` in the order of computation.
    pub(crate) fn position(&self, t: usize) -> usize {
        self.position[&t]
    }

    /// How many loops the computations of `a` and `b` share an iteration
    /// of (the loops around both, outer to inner, up to the first that is
    /// not the same loop).
    pub(crate) fn shared_loops(&self, a: usize, b: usize) -> usize {
        self.loops[&a].iter().zip(&self.loops[&b]).take_while(|(x, y)| x.0 == y.0).count()
    }

    /// The dimension and direction of the loop at depth `level` around `t`.
    pub(crate) fn loop_at(&self, t: usize, level: usize) -> (usize, bool) {
        let (_, dim, forward) = self.loops[&t][level];
        (dim, forward)
    }

    /// The depth of the loop over `dim` around `t`.
    pub(crate) fn level(&self, t: usize, dim: usize) -> Option<usize> {
        self.loops[&t].iter().position(|l| l.1 == dim)
    }

    /// The loops around `t`: dimension and direction, outer to inner.
    pub(crate) fn loops(&self, t: usize) -> impl Iterator<Item = (usize, bool)> + '_ {
        self.loops[&t].iter().map(|l| (l.1, l.2))
    }
}
