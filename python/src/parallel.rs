//! Data-parallel training over the processes of a run (`mpirun -np P
//! python train.py`): `Program.data_parallel`, `tempo.processes` and
//! `tempo.barrier`, thin layers over the Rust API's (`Program::data_parallel`,
//! `tempo::processes`, `tempo::barrier`).

use super::{PyProgram, error};
use pyo3::prelude::*;

/// This process's part of a batch split over the processes of the run
/// (`Program.data_parallel`): `rank`, `processes`, and the part's `start`
/// and `len` (the items `start` to `start + len - 1` of the whole batch).
#[pyclass(frozen, name = "Shard", module = "tempo")]
pub(super) struct PyShard {
    shard: tempo::Shard,
}

#[pymethods]
impl PyShard {
    /// This process's rank (0 to `processes - 1`).
    #[getter]
    fn rank(&self) -> usize {
        self.shard.rank
    }
    /// The number of processes of the run (1 without a launcher).
    #[getter]
    fn processes(&self) -> usize {
        self.shard.processes
    }
    /// The first item of this process's part of the batch.
    #[getter]
    fn start(&self) -> usize {
        self.shard.start
    }
    /// The number of items of this process's part.
    #[getter]
    fn len(&self) -> usize {
        self.shard.len
    }
    fn __repr__(&self) -> String {
        let s = &self.shard;
        format!("Shard(rank={}, processes={}, start={}, len={})", s.rank, s.processes, s.start, s.len)
    }
}

#[pymethods]
impl PyProgram {
    /// Data-parallel training over the processes of the run (`mpirun -np
    /// P python train.py`, each process building and running the same
    /// program): the batch of `batch` items is split into equal parts, one
    /// per process, and this process's part is returned (write the program
    /// for `shard.len` items and feed it the items `shard.start` onward).
    /// Every gradient of the program (`Program.grad`, before or after)
    /// becomes the mean over the processes of their gradients, sent in one
    /// fused buffer per iteration (one `MPI_Allreduce`): with a loss that is
    /// a mean over the batch, the whole batch's gradient, so parameters
    /// that start equal stay equal on every process. Without a launcher
    /// the run is one process with the whole batch. A batch that does not
    /// split evenly is refused.
    ///
    /// >>> p = tempo.Program()
    /// >>> shard = p.data_parallel(8)
    /// >>> (shard.rank, shard.processes, shard.start, shard.len)
    /// (0, 1, 0, 8)
    fn data_parallel(&mut self, py: Python<'_>, batch: usize) -> PyResult<PyShard> {
        let shard = self.program.data_parallel(batch).map_err(|e| error(py, "Program.data_parallel", e))?;
        Ok(PyShard { shard })
    }
}

/// `(rank, processes)` of this run: this process's rank and their number
/// (`(0, 1)` without a launcher).
///
/// >>> tempo.processes()
/// (0, 1)
#[pyfunction]
fn processes(py: Python<'_>) -> PyResult<(usize, usize)> {
    tempo::processes().map_err(|e| error(py, "processes", e))
}

/// Waits until every process of the run gets here (nothing in a run of
/// one process): for example between compiling and timing a run.
///
/// >>> tempo.barrier()
#[pyfunction]
fn barrier(py: Python<'_>) -> PyResult<()> {
    py.detach(tempo::barrier).map_err(|e| error(py, "barrier", e))
}

pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyShard>()?;
    m.add_function(wrap_pyfunction!(processes, m)?)?;
    m.add_function(wrap_pyfunction!(barrier, m)?)?;
    Ok(())
}
