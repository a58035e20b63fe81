//! `determinism`: the same seed gives the same run, step for step.
//!
//! Every result of this tool rests on replay; a run that differs on a second try
//! (a HashMap order, a clock read, a thread race) makes every failure unreproducible.
//! Each run keeps a rolling digest per step, so a mismatch names the first step where
//! two runs of one seed diverged.

/// The first step at which two per-step digest lists differ, if any.
pub fn first_divergence(a: &[u64], b: &[u64]) -> Option<u64> {
    let common = a.len().min(b.len());
    (0..common)
        .find(|&i| a[i] != b[i])
        .or((a.len() != b.len()).then_some(common))
        .map(|i| i as u64 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_step_digests_have_no_divergence() {
        assert_eq!(first_divergence(&[1, 2, 3], &[1, 2, 3]), None);
    }

    #[test]
    fn the_first_differing_step_is_named_one_based() {
        assert_eq!(first_divergence(&[1, 2, 3], &[1, 9, 3]), Some(2));
    }

    #[test]
    fn a_shorter_run_diverges_where_it_stopped() {
        assert_eq!(first_divergence(&[1, 2], &[1, 2, 3]), Some(3));
    }
}
