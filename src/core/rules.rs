//! Decision tables: ordered rules, first match wins, the order is the policy. The router's
//! ladder, the quorum's outcome table, admission's table and the gate's rules are all
//! `[Rule<Facts, Then>; N]` read by [`first_match`]: each decision computes its facts once,
//! and its table says what they conclude.

/// One row of a decision table.
#[derive(Debug, Clone, Copy)]
pub struct Rule<F: 'static, T> {
    /// The row's number in the contract's table (one number may have several rows).
    pub number: u8,
    /// When it matches.
    pub when: fn(&F) -> bool,
    /// What it concludes.
    pub then: T,
}

/// A row, as the tables write it: `rule(3, |f| ..., then)`.
pub const fn rule<F, T>(number: u8, when: fn(&F) -> bool, then: T) -> Rule<F, T> {
    Rule { number, when, then }
}

/// The first rule of `table`, from row number `from` on, that matches `facts`. A table ends
/// with a rule that always matches; its caller still fails closed on `None`.
pub fn first_match<'a, F, T>(
    table: &'a [Rule<F, T>],
    facts: &F,
    from: u8,
) -> Option<&'a Rule<F, T>> {
    table
        .iter()
        .filter(|r| r.number >= from)
        .find(|r| (r.when)(facts))
}
