//! The schedule level: `temporal-schedule` makes the execution order that
//! the scheduler ([`crate::schedule`]) finds explicit IR, and
//! `temporal-print-schedule` prints it in a short readable form.
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

use crate::schedule::{Nest, Schedule};
use crate::temporal_to_loops::sanitize;
use melior::ir::{
    BlockLike, Location, Module, OperationRef, RegionLike, ValueLike,
    attribute::StringAttribute,
    operation::{OperationLike, OperationResult},
};
use std::fmt::Write;
use tempo_dialects::block_operations;
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
        let text = schedule_text(&program, &schedule);
        drop(program);
        remove_schedule(op);
        let context = op.context();
        let parsed = Module::parse(unsafe { context.to_ref() }, &text).ok_or_else(|| {
            vec![PassDiagnostic::new(op.location(), format!("internal error: the schedule does not parse\n{text}"))]
        })?;
        let body = module_body(op)?;
        for moved in block_operations(parsed.body()) {
            unsafe {
                mlir_sys::mlirOperationRemoveFromParent(moved.to_raw());
                mlir_sys::mlirBlockAppendOwnedOperation(body.to_raw(), moved.to_raw());
            }
        }
        Ok(())
    }
}

/// The `temporal-print-schedule` pass.
pub struct PrintSchedule;

impl TempoPass for PrintSchedule {
    fn name(&self) -> &'static str {
        "temporal-print-schedule"
    }
    fn summary(&self) -> &'static str {
        "Print the schedule (loops, directions, placed tensors and their stores) to stderr; the IR is unchanged"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        let schedule = match read_schedule(op, &program)? {
            Some((nests, location)) => Schedule::with_nests(&program, nests, location)?,
            None => Schedule::new(&program)?,
        };
        eprint!("{}", pretty(&program, &schedule));
        Ok(())
    }
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
    op.attribute(name).ok().and_then(|a| StringAttribute::try_from(a).ok()).map(|s| s.value().to_string())
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

/// The text of a module holding `@tempo_schedule` for `schedule`.
pub fn schedule_text(program: &Program, schedule: &Schedule) -> String {
    let bounds: Vec<String> =
        program.dims.iter().enumerate().map(|(d, dim)| format!("%{}{d}", sanitize(&dim.bound))).collect();
    let args: Vec<String> = bounds.iter().map(|b| format!("{b}: index")).collect();
    let mut out = format!("module {{\n  func.func @{SCHEDULE_FUNCTION}({}) {{\n", args.join(", "));
    for nest in &schedule.nests {
        let mut indent = "    ".to_string();
        let mut variables = vec![String::new(); program.dims.len()];
        for (&d, &forward) in nest.dims.iter().zip(&nest.forward) {
            let name = sanitize(&program.dims[d].name);
            let variable = format!("%{name}{d}");
            let counter = if forward { variable.clone() } else { format!("%{name}{d}_step") };
            let _ = writeln!(out, "{indent}affine.for {counter} = 0 to {} {{", bounds[d]);
            if !forward {
                let _ = writeln!(
                    out,
                    "{indent}  {variable} = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>({counter})[{}]",
                    bounds[d]
                );
            }
            variables[d] = variable;
            indent += "  ";
        }
        for &t in &nest.body {
            let tensor = &program.tensors[t];
            let coords: Vec<&str> = tensor.domain.iter().map(|&d| variables[d].as_str()).collect();
            let types: Vec<&str> = coords.iter().map(|_| "index").collect();
            let _ = writeln!(
                out,
                "{indent}\"temporal.compute\"({}) {{tensor = \"{}\"}} : ({}) -> ()",
                coords.join(", "),
                tensor.name,
                types.join(", ")
            );
        }
        for (&d, &forward) in nest.dims.iter().zip(&nest.forward).rev() {
            indent.truncate(indent.len() - 2);
            let direction = if forward { "forward" } else { "backward" };
            let _ = writeln!(
                out,
                "{indent}}} {{tempo.dim = \"{}\", tempo.direction = \"{direction}\"}}",
                program.dims[d].name
            );
        }
    }
    out += "    return\n  }\n}\n";
    out
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
            "temporal.compute" => {
                let t = compute_target(op, program, &[])?;
                if !program.tensors[t].domain.is_empty() {
                    return Err(located(op, format!("'{}' needs loops over its domain", program.tensors[t].name)));
                }
                nests.push(Nest { dims: Vec::new(), forward: Vec::new(), body: vec![t] });
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

/// One loop nest: a chain of `affine.for` ops whose innermost body holds
/// the `temporal.compute` ops.
fn read_nest<'c>(outer: OperationRef<'c, '_>, program: &Program<'c>) -> Result<Nest, Vec<PassDiagnostic<'c>>> {
    let mut nest = Nest { dims: Vec::new(), forward: Vec::new(), body: Vec::new() };
    // The value standing for each dimension's variable, by dimension.
    let mut variables: Vec<(usize, mlir_sys::MlirValue)> = Vec::new();
    let mut current = outer;
    loop {
        let dim_name = string_attribute(current, "tempo.dim")
            .ok_or_else(|| located(current, "a loop of @tempo_schedule needs a 'tempo.dim' string".into()))?;
        let d = program
            .dims
            .iter()
            .position(|dim| dim.name == dim_name)
            .ok_or_else(|| located(current, format!("unknown dimension '{dim_name}'")))?;
        let forward = match string_attribute(current, "tempo.direction").as_deref() {
            Some("forward") => true,
            Some("backward") => false,
            _ => return Err(located(current, "'tempo.direction' is \"forward\" or \"backward\"".into())),
        };
        if nest.dims.contains(&d) {
            return Err(located(current, format!("two loops over '{dim_name}' in one nest")));
        }
        let block = current
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or_else(|| located(current, "a loop without a body".into()))?;
        let counter = block.argument(0).map_err(|_| located(current, "a loop without a variable".into()))?;
        nest.dims.push(d);
        nest.forward.push(forward);
        let mut variable = forward.then(|| counter.to_raw());
        let mut inner = None;
        for op in block_operations(block) {
            match name_of(op).as_str() {
                "affine.yield" => {}
                "affine.apply" if !forward && variable.is_none() => {
                    // `bound - 1 - counter`, as temporal-schedule writes it.
                    let result = op.result(0).map_err(|_| located(op, "affine.apply has a result".into()))?;
                    let reads_counter =
                        op.operand(0).is_ok_and(|v| unsafe { mlir_sys::mlirValueEqual(v.to_raw(), counter.to_raw()) });
                    let reversed = op
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
                        return Err(located(op, "a backward loop's variable is bound - 1 - counter".into()));
                    }
                    variable = Some(OperationResult::from(result).to_raw());
                }
                "affine.for" if inner.is_none() && nest.body.is_empty() => inner = Some(op),
                "temporal.compute" if inner.is_none() => {
                    let Some(v) = variable else {
                        return Err(located(op, "a backward loop's variable is defined first".into()));
                    };
                    let mut all = variables.clone();
                    all.push((d, v));
                    nest.body.push(compute_target(op, program, &all)?);
                }
                other => return Err(located(op, format!("unexpected '{other}' in a loop of @tempo_schedule"))),
            }
        }
        let Some(v) = variable else {
            return Err(located(current, "a backward loop's variable is bound - 1 - counter".into()));
        };
        variables.push((d, v));
        match inner {
            Some(op) => current = op,
            None => break,
        }
    }
    if nest.body.is_empty() {
        return Err(located(outer, "a loop nest of @tempo_schedule computes nothing".into()));
    }
    Ok(nest)
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

/// The schedule in a short readable form.
pub fn pretty(program: &Program, schedule: &Schedule) -> String {
    let mut out = String::from("schedule:\n");
    for nest in &schedule.nests {
        let mut indent = "  ".to_string();
        for (&d, &forward) in nest.dims.iter().zip(&nest.forward) {
            let dim = &program.dims[d];
            let range = if forward { format!("0 up to {}-1", dim.bound) } else { format!("{}-1 down to 0", dim.bound) };
            let _ = writeln!(out, "{indent}for {} = {range}:", dim.name);
            indent += "  ";
        }
        for &t in &nest.body {
            let tensor = &program.tensors[t];
            let _ = writeln!(
                out,
                "{indent}{}[{}]  store: {}",
                tensor.name,
                program.domain_names(t).join(", "),
                schedule.storage[t]
            );
        }
    }
    out
}
