//! Work spread over the machine's cores.

use std::num::NonZero;
use std::sync::{Mutex, PoisonError};

/// Stack of each worker: syn's parser recurses as deep as the code nests, and
/// a thread's default (2 MiB) is less than the main thread's.
const STACK: usize = 8 << 20;

/// `work` applied to each of `items`, in the items' order. One worker thread
/// per core takes the next item until none is left, so that one large item
/// does not hold the others back; each worker starts from its own `state`.
///
/// The workers are always threads of their own, even for one item, so that
/// state bound to a thread (such as proc-macro2's source map) is never the
/// caller's.
pub fn map<I: Send, T: Send, S>(
    items: Vec<I>,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, I) -> T + Sync,
) -> Vec<T> {
    let workers = std::thread::available_parallelism()
        .map_or(1, NonZero::get)
        .min(items.len());
    let queue = Mutex::new(items.into_iter().enumerate());
    let next = || queue.lock().unwrap_or_else(PoisonError::into_inner).next();
    let mut done: Vec<(usize, T)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                std::thread::Builder::new()
                    .stack_size(STACK)
                    .spawn_scoped(scope, || {
                        let mut state = state();
                        let mut out = Vec::new();
                        while let Some((i, item)) = next() {
                            out.push((i, work(&mut state, item)));
                        }
                        out
                    })
                    .expect("the system starts a worker thread")
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, t)| t).collect()
}

/// `work`, run on a thread of its own. Text that proc-macro2 tokenizes
/// stays in a source map of the thread that tokenized it until the thread
/// ends (it is what spans point into): a scan of the whole crate done on
/// the main thread would keep a copy of every file it read for the rest of
/// the run.
pub fn isolated<T: Send>(work: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(STACK)
            .spawn_scoped(scope, work)
            .expect("the system starts a worker thread")
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_the_order_of_the_items() {
        let items: Vec<u64> = (0..100).collect();
        let out = super::map(
            items,
            || 0_u64,
            |seen, i| {
                *seen += 1;
                i * 2
            },
        );
        assert_eq!(out, (0..100).map(|i| i * 2).collect::<Vec<_>>());
        assert!(super::map(Vec::<u8>::new(), || (), |(), i| i).is_empty());
    }
}
