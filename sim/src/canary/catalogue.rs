//! The catalogue of canaries against the judge's rules and the invariants: every
//! rule of `judge/rules/table.rs` and every invariant has a canary that breaks it,
//! or a line with the reason in [`Bug::RULES_WITHOUT_CANARY`] or
//! [`Bug::INVARIANTS_WITHOUT_CANARY`].
//!
//! Guarantee: a rule or checker added without a canary fails these tests, so the
//! harness cannot silently grow a property nobody has shown it able to fail; and an
//! exemption that a canary has since made stale fails too, so the lists stay true.

use super::Bug;
use crate::invariant::Invariant;
use crate::judge::rules::table::RULES;

#[test]
fn every_rule_of_the_table_has_a_canary_or_a_stated_reason() {
    let missing: Vec<&str> = RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !Bug::ALL.iter().any(|b| b.breaks_rule() == Some(id)))
        .filter(|id| !Bug::RULES_WITHOUT_CANARY.iter().any(|(r, _)| r == id))
        .collect();
    assert_eq!(
        missing,
        Vec::<&str>::new(),
        "rules with no canary and no reason"
    );
}

#[test]
fn every_invariant_has_a_canary_or_a_stated_reason() {
    let missing: Vec<Invariant> = Invariant::ALL
        .into_iter()
        .filter(|i| !Bug::ALL.iter().any(|b| b.caught_by() == *i))
        .filter(|i| !Bug::INVARIANTS_WITHOUT_CANARY.iter().any(|(e, _)| e == i))
        .collect();
    assert_eq!(
        missing,
        Vec::<Invariant>::new(),
        "invariants with no canary and no reason"
    );
}

#[test]
fn no_exemption_is_stale_and_every_named_rule_exists() {
    for (rule, why) in Bug::RULES_WITHOUT_CANARY {
        assert!(RULES.iter().any(|r| r.id == rule), "{rule} is not a rule");
        assert!(!why.is_empty());
        let by: Vec<&str> = Bug::ALL
            .iter()
            .filter(|b| b.breaks_rule() == Some(rule))
            .map(|b| b.name())
            .collect();
        assert_eq!(by, Vec::<&str>::new(), "{rule} is exempt but has a canary");
    }
    for (inv, why) in Bug::INVARIANTS_WITHOUT_CANARY {
        assert!(!why.is_empty());
        let by: Vec<&str> = Bug::ALL
            .iter()
            .filter(|b| b.caught_by() == inv)
            .map(|b| b.name())
            .collect();
        assert_eq!(by, Vec::<&str>::new(), "{inv} is exempt but has a canary");
    }
    for b in Bug::ALL {
        if let Some(rule) = b.breaks_rule() {
            assert!(RULES.iter().any(|r| r.id == rule), "{}: {rule}", b.name());
            // A rule's breach is reported by `pairing`, save the breakpoint limit,
            // which the body-less simulated request is held to by its own checker.
            let by = if rule == "cache_breakpoints_max" {
                Invariant::CacheBreakpoints
            } else {
                Invariant::Pairing
            };
            assert_eq!(b.caught_by(), by, "{}", b.name());
        }
    }
}
