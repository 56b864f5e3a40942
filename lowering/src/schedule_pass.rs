//! The schedule level: `temporal-schedule` makes the execution order that
//! the scheduler ([`crate::schedule`]) finds explicit IR
//! (`temporal-print-schedule`, in [`crate::print_schedule_pass`], prints it
//! in a short readable form).
//!
//! `temporal-schedule` adds (or replaces) the function `@tempo_schedule`,
//! whose arguments are the bounds (in `temporal.dim` order). Its body holds
//! one `affine.for` nest per loop nest of the schedule, in execution order,
//! each loop over one temporal dimension from 0 to its bound and marked
//! with `tempo.dim` (the dimension's name) and `tempo.direction`
//! (`"forward"`, or `"backward"`: the loop counts up and the dimension's
//! variable is `bound - 1 - i`). The innermost body places the tensors'
//! work as `temporal.compute` ops, in body order; tensors without a domain
//! are computed outside any loop. The program itself is left as it is.
//!
//! `lower-temporal-to-loops` follows `@tempo_schedule` when the module has
//! one (see [`read_schedule`]), after checking that it is legal, so a
//! schedule can also be written or edited by hand.

use crate::ir_builder::{Builder, affine_map, define_function};
use crate::schedule::{Nest, Schedule, Step};
use melior::ir::attribute::{IntegerAttribute, StringAttribute};
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::r#type::IntegerType;
use melior::ir::{BlockLike, Location, OperationRef, RegionLike, Value, ValueLike};
use tempo_dialects::block_operations;
use tempo_dialects::temporal as t;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};
use tempo_passes::program::Program;
use tempo_passes::verify::verify_program;

/// Name of the function holding the schedule.
pub const SCHEDULE_FUNCTION: &str = "tempo_schedule";

/// The `temporal-schedule` pass.
pub struct TemporalSchedule;

impl TempoPass for TemporalSchedule {
    fn name(&self) -> &'static str {
        "temporal-schedule"
    }
    fn summary(&self) -> &'static str {
        "Schedule the program (SCCs of the SDG ordered by dependence distance) and write the order as affine.for nests of temporal.compute ops in @tempo_schedule"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        let schedule = Schedule::new(&program)?;
        insert_schedule(op, &program, &schedule)
    }
}

/// Writes `schedule` (of `program`, read from `op`) into module `op` as
/// `@tempo_schedule`, replacing any there: what the pass does with the
/// schedule it finds, for a caller that has one already (the runtime,
/// which keeps the schedule it checked and lowers without this pass).
pub fn insert_schedule<'c>(op: OperationRef<'c, '_>, program: &Program<'c>, schedule: &Schedule) -> PassResult<'c> {
    remove_schedule(op);
    module_body(op)?;
    build_schedule(op, program, schedule).map_err(|e| vec![PassDiagnostic::new(op.location(), e)])
}

/// Builds `@tempo_schedule` for `schedule` at the end of `module`.
fn build_schedule(module: OperationRef, program: &Program, schedule: &Schedule) -> Result<(), String> {
    let context = module.context();
    let index = melior::ir::Type::index(unsafe { context.to_ref() });
    let (b, bounds) = define_function(module, SCHEDULE_FUNCTION, &vec![index; program.dims.len()])?;
    for nest in &schedule.nests {
        let mut variables = vec![None; program.dims.len()];
        build_steps(&b, program, &nest.steps(program), &|t| nest.lag(t), &bounds, &mut variables)?;
    }
    Ok(())
}

/// Builds `steps` as `temporal.compute` ops and loops at `b`; `variables`
/// holds each open loop's dimension variable.
fn build_steps<'c, 'a>(
    b: &Builder<'c, 'a>,
    program: &Program,
    steps: &[Step],
    lag: &dyn Fn(usize) -> i64,
    bounds: &[Value<'c, 'a>],
    variables: &mut Vec<Option<Value<'c, 'a>>>,
) -> Result<(), String> {
    use tempo_passes::affine::AffineExpr as E;
    let context = b.context();
    for step in steps {
        match step {
            Step::Compute(t) => {
                let tensor = &program.tensors[*t];
                let coords = tensor
                    .domain
                    .iter()
                    .map(|&d| {
                        variables[d].ok_or_else(|| format!("compiler fault: '{}' outside its loops", tensor.name))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut attributes = vec![("tensor", StringAttribute::new(context, &tensor.name).into())];
                if lag(*t) != 0 {
                    let i64 = IntegerType::new(context, 64).into();
                    attributes.push(("lag", IntegerAttribute::new(i64, lag(*t)).into()));
                }
                b.op(t::ComputeOp::NAME, &coords, &[], &attributes)?;
            }
            Step::Loop { dim: d, forward, body } => {
                let (d, forward) = (*d, *forward);
                let latest =
                    body.iter().map(|step| if let Step::Compute(t) = step { lag(*t) } else { 0 }).max().unwrap_or(0);
                let zero = affine_map(context, 0, 0, &[E::Constant(0)]);
                let upper = match latest {
                    0 => E::Symbol(0),
                    l => E::Add(Box::new(E::Symbol(0)), Box::new(E::Constant(l))),
                };
                let upper = affine_map(context, 0, 1, &[upper]);
                let (inside, counter) = b.affine_for((zero, &[]), (upper, &[bounds[d]]))?;
                let variable = match forward {
                    true => counter,
                    // s0 - d0 - 1
                    false => {
                        let minus = |e: E| E::Mul(Box::new(E::Constant(-1)), Box::new(e));
                        let last = E::Add(
                            Box::new(E::Add(Box::new(E::Symbol(0)), Box::new(minus(E::Dim(0))))),
                            Box::new(E::Constant(-1)),
                        );
                        inside.affine_value(
                            "affine.apply",
                            affine_map(context, 1, 1, &[last]),
                            &[counter, bounds[d]],
                        )?
                    }
                };
                let direction = if forward { "forward" } else { "backward" };
                let mut op = loop_of(counter)?;
                op.set_attribute("tempo.dim", StringAttribute::new(context, &program.dims[d].name).into());
                op.set_attribute("tempo.direction", StringAttribute::new(context, direction).into());
                let outer = variables[d].replace(variable);
                build_steps(&inside, program, body, lag, bounds, variables)?;
                variables[d] = outer;
            }
        }
    }
    Ok(())
}

/// The loop whose induction variable `counter` is.
fn loop_of<'c, 'a>(counter: Value<'c, 'a>) -> Result<melior::ir::operation::OperationRefMut<'c, 'a>, String> {
    let block = unsafe { mlir_sys::mlirBlockArgumentGetOwner(counter.to_raw()) };
    let op = unsafe { mlir_sys::mlirBlockGetParentOperation(block) };
    if op.ptr.is_null() {
        return Err("compiler fault: a loop variable outside its loop".into());
    }
    Ok(unsafe { melior::ir::operation::OperationRefMut::from_raw(op) })
}

fn module_body<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<melior::ir::BlockRef<'c, 'a>, Vec<PassDiagnostic<'c>>> {
    op.region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| vec![PassDiagnostic::new(op.location(), "expected a module with a body")])
}

fn name_of(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

fn string_attribute(op: OperationRef, name: &str) -> Option<String> {
    op.attribute(name).ok().and_then(tempo_passes::program::string_attr)
}

/// The `@tempo_schedule` function of `module`, if any.
fn schedule_function<'c, 'a>(module: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    let body = module.region(0).ok()?.first_block()?;
    block_operations(body).into_iter().find(|op| {
        name_of(*op) == "func.func" && string_attribute(*op, "sym_name").as_deref() == Some(SCHEDULE_FUNCTION)
    })
}

/// Removes `@tempo_schedule` from `module` (its ops define nothing used
/// elsewhere).
pub fn remove_schedule(module: OperationRef) {
    if let Some(function) = schedule_function(module) {
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(function.to_raw());
            mlir_sys::mlirOperationDestroy(function.to_raw());
        }
    }
}

/// Reads the nests of `@tempo_schedule`, if the module has one. The result
/// still has to be checked against the program ([`Schedule::with_nests`]).
pub fn read_schedule<'c>(
    module: OperationRef<'c, '_>,
    program: &Program<'c>,
) -> Result<Option<(Vec<Nest>, Location<'c>)>, Vec<PassDiagnostic<'c>>> {
    let Some(function) = schedule_function(module) else { return Ok(None) };
    let body = function
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| vec![PassDiagnostic::new(function.location(), "@tempo_schedule has no body")])?;
    let mut nests = Vec::new();
    for op in block_operations(body) {
        match name_of(op).as_str() {
            "func.return" => {}
            t::ComputeOp::NAME => {
                let t = compute_target(op, program, &[])?;
                if !program.tensors[t].domain.is_empty() {
                    return Err(located(op, format!("'{}' needs loops over its domain", program.tensors[t].name)));
                }
                nests.push(Nest {
                    dims: Vec::new(),
                    forward: Vec::new(),
                    body: vec![t],
                    inner: Vec::new(),
                    lags: Default::default(),
                });
            }
            "affine.for" => nests.push(read_nest(op, program)?),
            other => return Err(located(op, format!("unexpected '{other}' in @tempo_schedule"))),
        }
    }
    Ok(Some((nests, function.location())))
}

fn located<'c>(op: OperationRef<'c, '_>, message: String) -> Vec<PassDiagnostic<'c>> {
    vec![PassDiagnostic::new(op.location(), message)]
}

/// One loop nest: an `affine.for` whose body holds `temporal.compute` ops
/// and further loops (a loop may hold several loops over one dimension,
/// in either direction: a sequence of nests).
fn read_nest<'c>(outer: OperationRef<'c, '_>, program: &Program<'c>) -> Result<Nest, Vec<PassDiagnostic<'c>>> {
    let mut variables: Vec<(usize, mlir_sys::MlirValue)> = Vec::new();
    let step = read_loop(outer, program, &mut variables)?;
    let mut nest = Nest::from_step(program, &step);
    if nest.body.is_empty() {
        return Err(located(outer, "a loop nest of @tempo_schedule computes nothing".into()));
    }
    // Tensors computed late (`lag = l`) in their plain nest; the checks of
    // `Schedule::with_nests` say whether that is a legal retiming.
    let mut lags = Vec::new();
    collect_lags(outer, program, &mut lags)?;
    for (t, lag) in lags {
        if let Some(plain) = nest.plain_nest_of_mut(t) {
            plain.lags.insert(t, lag);
        }
    }
    Ok(nest)
}

/// The `lag` attributes of the `temporal.compute` ops inside `op`.
fn collect_lags<'c>(
    op: OperationRef<'c, '_>,
    program: &Program<'c>,
    lags: &mut Vec<(usize, i64)>,
) -> Result<(), Vec<PassDiagnostic<'c>>> {
    let Some(block) = op.region(0).ok().and_then(|r| r.first_block()) else { return Ok(()) };
    for inner in block_operations(block) {
        match name_of(inner).as_str() {
            "affine.for" => collect_lags(inner, program, lags)?,
            t::ComputeOp::NAME => {
                let Ok(attribute) = inner.attribute("lag") else { continue };
                let lag = melior::ir::attribute::IntegerAttribute::try_from(attribute)
                    .map_err(|_| located(inner, "'lag' is an integer".into()))?
                    .value();
                let name = string_attribute(inner, "tensor").unwrap_or_default();
                if let Some(t) = program.tensors.iter().position(|tensor| tensor.name == name) {
                    lags.push((t, lag));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads the loop `op`; `variables` holds the value standing for each
/// enclosing loop's dimension variable.
fn read_loop<'c>(
    op: OperationRef<'c, '_>,
    program: &Program<'c>,
    variables: &mut Vec<(usize, mlir_sys::MlirValue)>,
) -> Result<Step, Vec<PassDiagnostic<'c>>> {
    let dim_name = string_attribute(op, "tempo.dim")
        .ok_or_else(|| located(op, "a loop of @tempo_schedule needs a 'tempo.dim' string".into()))?;
    let d = program
        .dims
        .iter()
        .position(|dim| dim.name == dim_name)
        .ok_or_else(|| located(op, format!("unknown dimension '{dim_name}'")))?;
    let forward = match string_attribute(op, "tempo.direction").as_deref() {
        Some("forward") => true,
        Some("backward") => false,
        _ => return Err(located(op, "'tempo.direction' is \"forward\" or \"backward\"".into())),
    };
    if variables.iter().any(|&(known, _)| known == d) {
        return Err(located(op, format!("two loops over '{dim_name}' in one nest")));
    }
    let block =
        op.region(0).ok().and_then(|r| r.first_block()).ok_or_else(|| located(op, "a loop without a body".into()))?;
    let counter = block.argument(0).map_err(|_| located(op, "a loop without a variable".into()))?;
    let mut variable = forward.then(|| counter.to_raw());
    let mut body = Vec::new();
    for inner in block_operations(block) {
        match name_of(inner).as_str() {
            "affine.yield" => {}
            "affine.apply" if !forward && variable.is_none() => {
                // `bound - 1 - counter`, as temporal-schedule writes it.
                let result = inner.result(0).map_err(|_| located(inner, "affine.apply has a result".into()))?;
                let reads_counter =
                    inner.operand(0).is_ok_and(|v| unsafe { mlir_sys::mlirValueEqual(v.to_raw(), counter.to_raw()) });
                let reversed = inner
                    .attribute("map")
                    .ok()
                    .and_then(tempo_passes::affine::AffineMap::from_attribute)
                    .and_then(|m| (m.results.len() == 1).then(|| m.results[0].linear()).flatten())
                    .is_some_and(|(dims, symbols, c)| {
                        dims == [-1]
                            && symbols.first() == Some(&1)
                            && symbols.iter().skip(1).all(|&x| x == 0)
                            && c == -1
                    });
                if !reads_counter || !reversed {
                    return Err(located(inner, "a backward loop's variable is bound - 1 - counter".into()));
                }
                variable = Some(result.to_raw());
            }
            "affine.for" | t::ComputeOp::NAME => {
                let Some(v) = variable else {
                    return Err(located(inner, "a backward loop's variable is defined first".into()));
                };
                variables.push((d, v));
                let step = if name_of(inner) == "affine.for" {
                    read_loop(inner, program, variables)
                } else {
                    compute_target(inner, program, variables).map(Step::Compute)
                };
                variables.pop();
                body.push(step?);
            }
            other => return Err(located(inner, format!("unexpected '{other}' in a loop of @tempo_schedule"))),
        }
    }
    Ok(Step::Loop { dim: d, forward, body })
}

/// The tensor a `temporal.compute` computes, checking that its coordinates
/// are the variables of its domain's loops, in domain order.
fn compute_target<'c>(
    op: OperationRef<'c, '_>,
    program: &Program<'c>,
    variables: &[(usize, mlir_sys::MlirValue)],
) -> Result<usize, Vec<PassDiagnostic<'c>>> {
    let name =
        string_attribute(op, "tensor").ok_or_else(|| located(op, "temporal.compute needs a 'tensor' string".into()))?;
    let t = program
        .tensors
        .iter()
        .position(|tensor| tensor.name == name)
        .ok_or_else(|| located(op, format!("no tensor named '{name}'")))?;
    let domain = &program.tensors[t].domain;
    let coords: Vec<_> = op.operands().collect();
    let matches = coords.len() == domain.len()
        && domain.iter().zip(&coords).all(|(d, c)| {
            variables.iter().any(|(vd, v)| vd == d && unsafe { mlir_sys::mlirValueEqual(*v, c.to_raw()) })
        });
    if !matches {
        let names: Vec<&str> = domain.iter().map(|&d| program.dims[d].name.as_str()).collect();
        return Err(located(
            op,
            format!("'{name}' is computed at the variables of its domain's loops, in order ({})", names.join(", ")),
        ));
    }
    Ok(t)
}
