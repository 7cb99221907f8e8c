//! Order-preserving maps on every core, for the stages whose items are independent (reading and
//! scrubbing files, decoding cached parses). Contiguous chunks, one per thread: the items are
//! many and alike, so balance comes from their number.

/// `f` over `items` on up to `available_parallelism` scoped threads; results in input order.
/// A panic in `f` propagates to the caller, as it would on one thread.
pub fn map<T: Sync, U: Send>(items: &[T], f: impl Fn(&T) -> U + Sync) -> Vec<U> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len() / 16 + 1);
    if threads <= 1 {
        return items.iter().map(&f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(|| part.iter().map(&f).collect::<Vec<U>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn keeps_the_input_order_at_every_size() {
        for n in [0usize, 1, 15, 16, 17, 100, 1001] {
            let items: Vec<usize> = (0..n).collect();
            assert_eq!(
                super::map(&items, |x| x * 3),
                items.iter().map(|x| x * 3).collect::<Vec<_>>()
            );
        }
    }
}
