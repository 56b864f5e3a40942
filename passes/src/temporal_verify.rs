//! `temporal-verify`: checks that a module holds a well-formed temporal
//! program (the checks are [`crate::verify::verify_program`], which the
//! pass framework also runs to build the model every rewrite works on).
//! Leaves the IR unchanged.

use crate::diagnostics::PassResult;
use crate::pass::{PassOptions, TempoPass};
use melior::ir::OperationRef;

/// The `temporal-verify` pass.
pub struct VerifyTemporal;

impl TempoPass for VerifyTemporal {
    fn name(&self) -> &'static str {
        "temporal-verify"
    }
    fn summary(&self) -> &'static str {
        "Check declarations, definitions, reads, types and causality (no zero-distance cycles) of a temporal program"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        crate::verify::verify_program(op).map(|_| ())
    }
}
