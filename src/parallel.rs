//! Host-side data parallelism over the items of a mesh (elements, faces), with
//! [`std::thread::scope`] and no dependency.
//!
//! Items `0..n` are cut into blocks of a fixed number of items ([`BLOCK`] unless the caller
//! says otherwise), independent of the number of threads; each thread takes a contiguous run
//! of blocks. A reduction that combines per-block results in block order
//! ([`map_blocks`]) therefore gives the same bits on a 2-core laptop and a 16-core server,
//! and per-item work ([`fill_rows`]) gives exactly the serial loop's values.

use std::ops::Range;

/// Items per block: large enough that a block's bookkeeping is noise, small enough that
/// ~100k-element meshes still give every thread of a large host work.
pub const BLOCK: usize = 1024;

/// Worker threads: the host's parallelism (1 when it cannot be queried).
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Blocks of `block` items covering `0..n` (the last one shorter).
fn blocks(n: usize, block: usize) -> usize {
    n.div_ceil(block.max(1))
}

/// Items of block `b`.
fn block_range(b: usize, block: usize, n: usize) -> Range<usize> {
    b * block..((b + 1) * block).min(n)
}

/// `f(range)` for every block of `block` items of `0..n`, in parallel; the results in block
/// order (empty for n = 0). Summing them in that order is a reduction whose bits do not
/// depend on the thread count.
pub fn map_blocks<T: Send>(n: usize, block: usize, f: impl Fn(Range<usize>) -> T + Sync) -> Vec<T> {
    let block = block.max(1);
    let nb = blocks(n, block);
    let workers = threads().min(nb);
    if workers <= 1 {
        return (0..nb).map(|b| f(block_range(b, block, n))).collect();
    }
    let per = nb.div_ceil(workers);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..nb)
            .step_by(per)
            .map(|first| {
                s.spawn(move || {
                    (first..(first + per).min(nb))
                        .map(|b| f(block_range(b, block, n)))
                        .collect::<Vec<T>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Fill `out`, laid out as rows of `n` values, one per item (`out[r * n + i]`, as the DG
/// coefficients `c[eq][k][element]`), in parallel blocks of `block` items: `f(range, rows)`
/// gets, for the items of `range`, every row's slice of them (`rows[r][i - range.start]`).
/// Each value is written by exactly one call, so the result is the serial loop's.
pub fn fill_rows<T: Send>(
    out: &mut [T],
    n: usize,
    block: usize,
    f: impl Fn(Range<usize>, &mut [&mut [T]]) + Sync,
) {
    if n == 0 || out.is_empty() {
        return;
    }
    debug_assert_eq!(
        out.len() % n,
        0,
        "fill_rows: {} values in rows of {n}",
        out.len()
    );
    let block = block.max(1);
    let nb = blocks(n, block);
    let mut pieces: Vec<Vec<&mut [T]>> = (0..nb).map(|_| Vec::new()).collect();
    for row in out.chunks_mut(n) {
        for (b, piece) in row.chunks_mut(block).enumerate() {
            pieces[b].push(piece);
        }
    }
    let workers = threads().min(nb);
    let per = nb.div_ceil(workers.max(1));
    let f = &f;
    std::thread::scope(|s| {
        for (g, group) in pieces.chunks_mut(per).enumerate() {
            s.spawn(move || {
                for (j, rows) in group.iter_mut().enumerate() {
                    f(block_range(g * per + j, block, n), rows);
                }
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_blocks_covers_every_item_once_in_order() {
        for (n, block) in [
            (0, 4),
            (1, 4),
            (4, 4),
            (5, 4),
            (1000, 7),
            (1000, 1000),
            (3, 0),
        ] {
            let ranges = map_blocks(n, block, |r| r);
            let items: Vec<usize> = ranges.iter().flat_map(|r| r.clone()).collect();
            assert_eq!(
                items,
                (0..n).collect::<Vec<_>>(),
                "n = {n}, block = {block}"
            );
            assert!(ranges
                .iter()
                .all(|r| r.len() <= block.max(1) && !r.is_empty()));
        }
    }

    #[test]
    fn fill_rows_writes_the_serial_values() {
        for (n, block) in [(1, 3), (10, 3), (1000, 64), (1031, BLOCK)] {
            let rows = 5;
            let mut out = vec![usize::MAX; rows * n];
            fill_rows(&mut out, n, block, |range, parts| {
                assert_eq!(parts.len(), rows);
                for (r, part) in parts.iter_mut().enumerate() {
                    assert_eq!(part.len(), range.len());
                    for (j, v) in part.iter_mut().enumerate() {
                        *v = r * n + range.start + j;
                    }
                }
            });
            assert_eq!(
                out,
                (0..rows * n).collect::<Vec<_>>(),
                "n = {n}, block = {block}"
            );
        }
    }
}
