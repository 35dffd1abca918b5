//! Special functions for exact tail probabilities: ln Γ and the
//! regularised incomplete beta, under the change-point t-test
//! (`analysis::changepoints`) and the exact bootstrap-median law
//! ([`super::stats::MedianResampler`]).

/// ln Γ(x), Lanczos (g = 7, 9 terms), for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let t = x + 7.5;
    let s: f64 = C[0] + (1..9).map(|i| C[i] / (x + i as f64)).sum::<f64>();
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + s.ln()
}

/// The regularised incomplete beta I_x(a, b), by its continued fraction
/// (modified Lentz), on the side where it converges fast.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(b, a, 1.0 - x);
    }
    const TINY: f64 = 1e-300;
    let (mut c, mut d) = (1.0, 1.0 - (a + b) * x / (a + 1.0));
    d = if d.abs() < TINY { TINY } else { d };
    d = 1.0 / d;
    let mut f = d;
    for m in 1..300 {
        let m = m as f64;
        for num in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + num * d;
            d = if d.abs() < TINY { TINY } else { d };
            c = 1.0 + num / c;
            c = if c.abs() < TINY { TINY } else { c };
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    front * f / a
}

/// P(X ≥ x) for X ~ Binomial(n, p): I_p(x, n − x + 1); 1 for x ≤ 0, 0
/// for x > n.
pub fn binomial_at_least(n: u64, p: f64, x: u64) -> f64 {
    if x == 0 {
        return 1.0;
    }
    if x > n {
        return 0.0;
    }
    incomplete_beta(x as f64, (n - x + 1) as f64, p)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The binomial tail against its sum of terms.
    #[test]
    fn binomial_tail_matches_the_sum_of_its_terms() {
        for (n, p) in [(1u64, 0.3f64), (7, 0.5), (20, 0.05), (59, 30.0 / 59.0), (200, 0.9)] {
            let pmf = |c: u64| {
                (ln_gamma(n as f64 + 1.0) - ln_gamma(c as f64 + 1.0) - ln_gamma((n - c) as f64 + 1.0)
                    + c as f64 * p.ln()
                    + (n - c) as f64 * (1.0 - p).ln())
                .exp()
            };
            for x in 0..=n + 1 {
                let sum: f64 = (x..=n).map(pmf).sum();
                let got = binomial_at_least(n, p, x);
                assert!((got - sum).abs() < 1e-10, "n {n} p {p} x {x}: {got} vs {sum}");
            }
        }
    }
}
