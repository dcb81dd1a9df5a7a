//! Judging a partitioned program's outputs against the program's own rounding noise.
//!
//! Partitioning reorders floating-point sums, so a partitioned program never equals the
//! original bit for bit; and some outputs are ill-conditioned (Adam's first step divides by
//! √v + ε with v ≈ g², so f32 rounding alone moves them by 1e-4). Both programs are therefore
//! judged against a higher-precision reference, the original program run in f64: an output
//! passes when the partitioned program is no further from the reference than a small factor of
//! the original f32 program's own distance, or than an absolute tolerance.
//!
//! ```text
//! output        original vs f64   partitioned vs f64   ratio   limit     verdict
//! opt/m/w1      3.1e-8            4.0e-8               1.3     1.0e-5    ok
//! params/wo     2.5e-5            2.2e-5               0.9     2.5e-4    ok (ill-conditioned)
//! params/wq     3.1e-8            4.1e-1               1e7     1.0e-5    FAIL
//! ```
//! A dropped all_reduce, swapped shards, a wrong reduction kind or the wrong half of a slice
//! move outputs by O(1), far above any limit (`tests/cli.rs` plants each).

/// The normalised error of one output and its worst element.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// max|a−b| / max|b| (b the reference); infinite when NaNs disagree.
    pub error: f64,
    /// (flat index, a, b) of the largest |a−b|.
    pub worst: Option<(usize, f64, f64)>,
}

/// Compares `got` with the reference `want` (same length).
pub fn compare(got: &[f64], want: &[f64]) -> Comparison {
    let scale = want
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(1e-30);
    let mut worst: Option<(usize, f64, f64)> = None;
    let mut largest = -1.0;
    for (index, (&a, &b)) in got.iter().zip(want).enumerate() {
        let difference = if a == b || (a.is_nan() && b.is_nan()) {
            0.0
        } else {
            let d = (a - b).abs();
            if d.is_nan() {
                f64::INFINITY
            } else {
                d
            }
        };
        if difference > largest {
            largest = difference;
            worst = Some((index, a, b));
        }
    }
    Comparison {
        error: largest.max(0.0) / scale,
        worst,
    }
}

/// How far from the reference a partitioned output may be.
#[derive(Clone, Copy, Debug)]
pub struct NoiseRule {
    /// Accepted: up to this many times the original's own error...
    pub factor: f64,
    /// ...or up to this normalised error, whichever is larger.
    pub tolerance: f64,
}

impl NoiseRule {
    /// The largest partitioned error accepted for an output whose original f32 program is
    /// `original_error` away from the reference.
    pub fn limit(&self, original_error: f64) -> f64 {
        (self.factor * original_error).max(self.tolerance)
    }
}

/// The verdict on one output.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The original f32 program against the reference (its own rounding noise).
    pub original: Comparison,
    /// The partitioned program against the reference.
    pub partitioned: Comparison,
    pub limit: f64,
}

impl Judgement {
    pub fn passed(&self) -> bool {
        self.partitioned.error <= self.limit
    }

    /// The original's own error is above the absolute tolerance: f32 rounding alone moves this
    /// output that much.
    pub fn ill_conditioned(&self, rule: &NoiseRule) -> bool {
        self.original.error > rule.tolerance
    }

    /// partitioned error / original error (∞ when the original is exact and the partitioned
    /// program is not, 1 when both are exact).
    pub fn ratio(&self) -> f64 {
        match (self.partitioned.error, self.original.error) {
            (p, o) if o > 0.0 => p / o,
            (p, _) if p > 0.0 => f64::INFINITY,
            _ => 1.0,
        }
    }
}

/// Judges one output: `original` and `partitioned` against `reference`.
pub fn judge(
    original: &[f64],
    partitioned: &[f64],
    reference: &[f64],
    rule: &NoiseRule,
) -> Judgement {
    let original = compare(original, reference);
    let partitioned = compare(partitioned, reference);
    let limit = rule.limit(original.error);
    Judgement {
        original,
        partitioned,
        limit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: NoiseRule = NoiseRule {
        factor: 10.0,
        tolerance: 1e-5,
    };

    #[test]
    fn normalised_error_and_worst_element() {
        let c = compare(&[1.0, 2.0, 3.5], &[1.0, 2.0, 4.0]);
        assert_eq!(c.error, 0.5 / 4.0);
        assert_eq!(c.worst, Some((2, 3.5, 4.0)));
        assert_eq!(compare(&[1.0], &[1.0]).error, 0.0);
        assert_eq!(compare(&[f64::NAN], &[f64::NAN]).error, 0.0);
        assert!(compare(&[f64::NAN], &[1.0]).error.is_infinite());
    }

    #[test]
    fn an_ill_conditioned_output_passes_within_its_own_noise() {
        // Adam's first step: the f32 original is 2.5e-5 away from f64 already; the partitioned
        // program 2.2e-5. Against the original alone (1e-5) this would have failed.
        let reference = [1.0, -1.0];
        let j = judge(
            &[1.0 + 2.5e-5, -1.0],
            &[1.0 - 2.2e-5, -1.0],
            &reference,
            &RULE,
        );
        assert!(j.passed());
        assert!(j.ill_conditioned(&RULE));
        assert!((j.ratio() - 0.88).abs() < 0.01);
    }

    #[test]
    fn a_wrong_output_fails_even_when_ill_conditioned() {
        // A dropped all_reduce leaves a quarter of the sum: O(1) away, far above 10x the noise.
        let reference = [4.0, 8.0];
        let j = judge(&[4.0001, 8.0], &[1.0, 2.0], &reference, &RULE);
        assert!(!j.passed());
        assert!(j.partitioned.error > 0.7);
    }

    #[test]
    fn exact_outputs_need_no_noise() {
        let j = judge(&[3.0], &[3.0], &[3.0], &RULE);
        assert!(j.passed());
        assert_eq!(j.ratio(), 1.0);
        // Below the absolute tolerance passes even though the original was exact.
        let j = judge(&[3.0], &[3.0 + 3e-6], &[3.0], &RULE);
        assert!(j.passed());
        assert!(j.ratio().is_infinite());
    }
}
