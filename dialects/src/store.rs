//! The `store` dialect: the memory level. A store holds the points of one
//! recurrent tensor that later reads still need; its kind decides how many
//! points it keeps and where point `p` of the tensor lives. Stores are
//! `memref`s whose leading dimensions index slots and whose trailing
//! dimensions are the point shape; every op that takes a store expects it to
//! be the result of a `store.alloc` in the same function (the kind is read
//! from there). `lower-store-to-memref` turns the ops into `memref`, `arith`,
//! `affine` and libc calls.
//!
//! Kinds (`kind` and `extent` of `store.alloc`):
//! - `"point"` (extent 1): one point, overwritten at every step;
//! - `"ring"` (extent `k`): the last `k` points along one dimension, point
//!   `p` at slot `p mod k`;
//! - `"window"` (extent `w`): the last `w` points, kept twice (`2w` slots,
//!   `p mod w` and `p mod w + w`) so that any `w` consecutive points are one
//!   contiguous view;
//! - `"blocks"` (extent `B`): points read through prefixes (or suffixes,
//!   written backward). Address space for the bound is reserved up front
//!   but memory is committed one block of `B` points at a time, when a point
//!   of a new block is written, so a prefix grows with `t` without copies;
//! - `"full"` (extent 0, one size operand per dimension): every point.
//!
//! A ring, window or blocks runs along the store dimension `along` (an
//! optional integer attribute, 0 when absent); the store's other dimensions
//! (one size operand each, and for `blocks` the along dimension's bound too)
//! are slices, each with its own slots: `memref<?x6x4xf32>` with `along = 1`
//! is a window of 3 along the second dimension for every coordinate of the
//! first.
//!
//! A `blocks` store allocated with `swap_space = "file"` can move points out
//! of memory and back: `store.spill` and `store.reload` (and `store.discard`
//! for points no longer needed), which the compiler emits when a program's
//! stores exceed a memory budget.

tempo_dialect_macros::dialect! {
    /// The store dialect: allocation, writes, reads, freeing and swapping of
    /// the stores that hold recurrent tensors' points.
    dialect store {
        /// Allocates a store of `kind` (`point`, `ring`, `window`, `blocks`,
        /// `full`) with `extent` (points of a ring, window width, points per
        /// block; 1 for `point`, 0 for `full`). `sizes` are the bounds of
        /// the store's dynamic dimensions: every dimension for `full` and
        /// `blocks`, every one but the slots (at `along`) for a ring or
        /// window, none for a point. The result type is the store's memref:
        /// its dimensions, then the point shape (`k` slots along a ring,
        /// `2w` along a window, `?` elsewhere).
        op alloc {
            operands { sizes: variadic any }
            attributes { kind: string, extent: integer }
            results { store: any }
        }

        /// Starts writing the point at `coords` (one index per store
        /// dimension): the result is the view (`memref<point shape, strided>`)
        /// its value is computed into. A `blocks` store commits the blocks
        /// up to the one holding the point.
        op write {
            operands { store: any, coords: variadic any }
            results { slot: any }
        }

        /// Ends the write of the point at `coords`: kinds that keep copies
        /// (`window`) make them here. Every `store.write` is followed by one
        /// `store.seal` with the same coordinates once the value is computed.
        op seal {
            operands { store: any, coords: variadic any }
        }

        /// A view of the point at `coords` (one index per store dimension,
        /// already within the domain; a point store ignores them).
        op read {
            operands { store: any, coords: variadic any }
            results { view: any }
        }

        /// A view of a box of points. `ranged` has one boolean per store
        /// dimension; `bounds` holds, per dimension, its first coordinate and,
        /// for a ranged dimension, the number of points. Point dimensions are
        /// dropped from the view; ranged ones lead it, in order. A range of a
        /// `window` store is at most `w` points long; of a `ring`, at most `k`.
        op read_range {
            operands { store: any, bounds: variadic any }
            attributes { ranged: array }
            results { view: any }
        }

        /// Frees the store; no op may use it afterwards.
        op free {
            operands { store: any }
        }

        /// Moves the points `[range[0], range[1])` of a one-dimensional
        /// store to host memory: the result is a host buffer of
        /// `memref<?x...point shape>` holding them. A `blocks` store releases
        /// the memory of the blocks that lie wholly in the range; reads of
        /// those points are not allowed until `store.swap_in`.
        op swap_out {
            operands { store: any, range: variadic any }
            results { host: any }
        }

        /// Moves the points `[range[0], range[1])` back from `host` (the
        /// result of the matching `store.swap_out`) into the store, and frees
        /// the host buffer.
        op swap_in {
            operands { store: any, host: any, range: variadic any }
        }

        /// Writes the points `[range[0], range[1])` of a one-dimensional
        /// `blocks` store to the store's swap space (a store allocated with
        /// `swap_space = "file"`: on the CPU a temporary file, at the
        /// points' own offsets, so no handle is needed to bring them back)
        /// and releases the blocks wholly inside the range when they are at
        /// either end of the committed blocks. Unlike `store.swap_out`, it
        /// can run in one loop and its `store.reload` in another: the
        /// compiler's swap planning emits these under `--memory-budget`.
        op spill {
            operands { store: any, range: variadic any }
        }

        /// Brings the points `[range[0], range[1])` back from the store's
        /// swap space, committing their blocks first.
        op reload {
            operands { store: any, range: variadic any }
        }

        /// Releases the blocks wholly inside `[range[0], range[1])` when
        /// they are at either end of the committed blocks (no later op reads
        /// those points before writing or reloading them).
        op discard {
            operands { store: any, range: variadic any }
        }
    }
}
