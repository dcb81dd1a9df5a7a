//! Peak memory from buffer lifetimes. A program is a sequence of steps (its ops in order); a
//! buffer lives from the step that defines it to its last use, inclusive. Arguments are live
//! from step 0 (the caller holds them), results to the end.
//!
//! ```text
//! step 0: %a = f(%x)      live: x a        x=4 a=4         → 8
//! step 1: %b = g(%a)      live: x a b      (a's last use)  → 12
//! step 2: %c = h(%b)      live: x b c                      → 12
//! return %c               peak 12 at step 1
//! ```

/// One buffer: its size and the steps it is live in (`start..=end`).
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    pub bytes: f64,
    pub start: usize,
    pub end: usize,
}

/// The peak of live bytes over all steps, and the first step where it is reached.
pub fn peak(buffers: &[Buffer]) -> (f64, usize) {
    // Sweep: +bytes at start, -bytes after end.
    let mut events: Vec<(usize, f64)> = Vec::with_capacity(2 * buffers.len());
    for buffer in buffers {
        events.push((buffer.start, buffer.bytes));
        events.push((buffer.end.saturating_add(1), -buffer.bytes));
    }
    // Frees before allocations at the same step: a buffer that died at step s-1 is gone at s.
    events.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let (mut live, mut best, mut best_step) = (0.0, 0.0, 0);
    let mut index = 0;
    while index < events.len() {
        let step = events[index].0;
        while index < events.len() && events[index].0 == step {
            live += events[index].1;
            index += 1;
        }
        if live > best {
            best = live;
            best_step = step;
        }
    }
    (best, best_step)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(bytes: f64, start: usize, end: usize) -> Buffer {
        Buffer { bytes, start, end }
    }

    #[test]
    fn a_chain_keeps_two_temporaries_live() {
        // The module documentation's example: x argument, a, b temporaries, c result.
        let end = usize::MAX;
        let buffers = [
            buffer(4.0, 0, end),
            buffer(4.0, 0, 1),
            buffer(4.0, 1, 2),
            buffer(4.0, 2, end),
        ];
        assert_eq!(peak(&buffers), (12.0, 1));
    }

    #[test]
    fn a_long_lived_buffer_adds_to_every_step() {
        let buffers = [buffer(100.0, 0, 5), buffer(10.0, 1, 1), buffer(20.0, 3, 4)];
        assert_eq!(peak(&buffers), (120.0, 3));
    }

    #[test]
    fn buffers_dying_at_a_step_are_gone_at_the_next() {
        let buffers = [buffer(8.0, 0, 0), buffer(8.0, 1, 1), buffer(8.0, 2, 2)];
        assert_eq!(peak(&buffers), (8.0, 0));
        assert_eq!(peak(&[]), (0.0, 0));
    }
}
