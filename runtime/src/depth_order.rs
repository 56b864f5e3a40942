//! The run-time half of reads through data: ordering a data group's points
//! by depth ([`tempo_depth_order`], called by the code of a data group's
//! nest, see `lowering/src/temporal_to_loops/by_depth.rs`) and recording a
//! read through data out of bounds ([`tempo_data_read_error`]). Errors are
//! kept for the run (the first one wins) and reported after it, at the
//! read's location ([`take_error`]).

use std::cell::RefCell;

/// A run-time error of a read through data: the read's number among the
/// program's reads through data (`tempo_passes::data_reads::read_sites`)
/// and the message.
pub type DataError = (usize, String);

thread_local! {
    static ERROR: RefCell<Option<DataError>> = const { RefCell::new(None) };
}

/// Forgets any error (before a run).
pub fn clear_error() {
    ERROR.with(|e| *e.borrow_mut() = None);
}

/// The first error of the run, if any.
pub fn take_error() -> Option<DataError> {
    ERROR.with(|e| e.borrow_mut().take())
}

fn record(site: usize, message: String) {
    ERROR.with(|e| {
        e.borrow_mut().get_or_insert((site, message));
    });
}

/// One read through data of a data group, as the compiled code describes
/// it: the reading tensor (position in the group), the branch the read is
/// in, the coordinate it reads at every point, and its site.
struct Column<'a> {
    member: usize,
    branch: i64,
    coordinates: &'a [i64],
    site: usize,
}

/// Orders the `n` points of a data group by depth, then by the branches
/// they take. `table` describes the group: the number of columns `c` and
/// of tensors `m`, then per column (tensor, branch, address of its `n`
/// coordinates, site), then per tensor (address of the `n` branches its
/// points take, number of branches). Writes the points in order into
/// `order` (`n` words) and the segments (points of one depth and one
/// choice of branches: start, end and that choice) into `segments` (`3n`
/// words); returns the number of segments, or -1 after recording an
/// error (a coordinate out of `[0, n)`, or a point that needs itself).
///
/// # Safety
/// Only compiled code calls it, with the buffers it describes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempo_depth_order(table: i64, n: i64, order: i64, segments: i64) -> i64 {
    let run = std::panic::catch_unwind(|| {
        let n = n.max(0) as usize;
        // SAFETY: the table holds the counts and entries described above;
        // every address is a buffer of `n` words (`order`: n, `segments`: 3n).
        let (columns, branches, order, segments) = unsafe {
            let table = table as *const i64;
            let (c, m) = (*table as usize, *table.add(1) as usize);
            let entries = std::slice::from_raw_parts(table.add(2), 4 * c + 2 * m);
            let columns: Vec<Column> = entries[..4 * c]
                .chunks(4)
                .map(|e| Column {
                    member: e[0] as usize,
                    branch: e[1],
                    coordinates: std::slice::from_raw_parts(e[2] as *const i64, n),
                    site: e[3] as usize,
                })
                .collect();
            let branches: Vec<(&[i64], i64)> = entries[4 * c..]
                .chunks(2)
                .map(|e| (std::slice::from_raw_parts(e[0] as *const i64, n), e[1].max(1) + 1))
                .collect();
            let order = std::slice::from_raw_parts_mut(order as *mut i64, n);
            let segments = std::slice::from_raw_parts_mut(segments as *mut i64, 3 * n);
            (columns, branches, order, segments)
        };
        match depth_order(n, &columns, &branches, order, segments) {
            Ok(count) => count as i64,
            Err((site, message)) => {
                record(site, message);
                -1
            }
        }
    });
    run.unwrap_or_else(|_| {
        record(usize::MAX, "internal error: ordering the points of reads through data panicked".into());
        -1
    })
}

/// Records a read through data whose coordinate `value` along the source's
/// dimension `k` is outside `[0, bound)`; the compiled code goes on with a
/// clamped coordinate, and the run fails. A source without points (`bound`
/// 0) has no coordinate to clamp to: the run ends here (under the guard;
/// the error recorded is the one reported).
#[unsafe(no_mangle)]
pub extern "C" fn tempo_data_read_error(site: i64, k: i64, value: i64, bound: i64) {
    record(
        site as usize,
        format!("a read through data names coordinate {value} (of the source's dimension {k}), outside [0, {bound})"),
    );
    if bound <= 0 {
        crate::guard::unwind_if_guarded("a read through data of a source without points");
    }
}

/// What [`tempo_depth_order`] computes, on slices.
fn depth_order(
    n: usize,
    columns: &[Column],
    branches: &[(&[i64], i64)],
    order: &mut [i64],
    segments: &mut [i64],
) -> Result<usize, DataError> {
    // The points each point reads, per column where its branch is taken.
    let taken = |c: &Column, p: usize| branches[c.member].0[p] == c.branch;
    for c in columns {
        for p in 0..n {
            let q = c.coordinates[p];
            if taken(c, p) && (q < 0 || q as usize >= n) {
                return Err((c.site, format!("at point {p}: the read through data names point {q}, outside [0, {n})")));
            }
        }
    }
    // Depths by an iterative depth-first walk (0: unseen, 1: on the walk,
    // 2: done), which also finds cycles.
    let mut depth = vec![0i64; n];
    let mut state = vec![0u8; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        stack.push((root, 0));
        while let Some(&mut (p, ref mut next)) = stack.last_mut() {
            if let Some(c) = columns.get(*next) {
                *next += 1;
                if !taken(c, p) {
                    continue;
                }
                let q = c.coordinates[p] as usize;
                match state[q] {
                    0 => {
                        state[q] = 1;
                        stack.push((q, 0));
                    }
                    1 => {
                        return Err((
                            c.site,
                            format!(
                                "point {q} needs itself through reads through data (the data has a cycle through point {p})"
                            ),
                        ));
                    }
                    _ => depth[p] = depth[p].max(depth[q] + 1),
                }
                continue;
            }
            state[p] = 2;
            stack.pop();
            if let Some(&(parent, _)) = stack.last() {
                depth[parent] = depth[parent].max(depth[p] + 1);
            }
        }
    }
    // The choice of branches of every tensor, as one number.
    let choice =
        |p: usize| branches.iter().fold(0i64, |acc, (taken, radix)| acc * radix + taken[p].clamp(0, radix - 1));
    let mut points: Vec<usize> = (0..n).collect();
    points.sort_by_key(|&p| (depth[p], choice(p), p));
    let mut count = 0;
    for (k, &p) in points.iter().enumerate() {
        order[k] = p as i64;
        let key = (depth[p], choice(p));
        if k == 0 || key != (depth[points[k - 1]], choice(points[k - 1])) {
            segments[3 * count] = k as i64;
            segments[3 * count + 2] = key.1;
            count += 1;
        }
        segments[3 * (count - 1) + 1] = k as i64 + 1;
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_run_after_the_points_they_read() {
        // Leaves 0..3; 3 reads 0 and 1; 4 reads 3 and 2 (branch 1 reads).
        let left = [0, 0, 0, 0, 3];
        let right = [0, 0, 0, 1, 2];
        let branch = [0, 0, 0, 1, 1];
        let columns = [
            Column { member: 0, branch: 1, coordinates: &left, site: 0 },
            Column { member: 0, branch: 1, coordinates: &right, site: 1 },
        ];
        let (mut order, mut segments) = ([0; 5], [0; 15]);
        let count = depth_order(5, &columns, &[(&branch, 3)], &mut order, &mut segments).unwrap();
        assert_eq!(order, [0, 1, 2, 3, 4]);
        assert_eq!(count, 3);
        assert_eq!(&segments[..9], &[0, 3, 0, 3, 4, 1, 4, 5, 1]);
    }

    #[test]
    fn cycles_and_points_out_of_bounds_are_errors() {
        let to = [1, 0];
        let branch = [0, 0];
        let columns = [Column { member: 0, branch: 0, coordinates: &to, site: 7 }];
        let (mut order, mut segments) = ([0; 2], [0; 6]);
        let error = depth_order(2, &columns, &[(&branch, 2)], &mut order, &mut segments).unwrap_err();
        assert_eq!(error.0, 7);
        assert!(error.1.contains("needs itself"), "{}", error.1);
        let far = [5, 0];
        let columns = [Column { member: 0, branch: 0, coordinates: &far, site: 2 }];
        let error = depth_order(2, &columns, &[(&branch, 2)], &mut order, &mut segments).unwrap_err();
        assert!(error.1.contains("outside [0, 2)"), "{}", error.1);
    }
}
