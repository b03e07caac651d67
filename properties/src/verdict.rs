//! What a search concludes about one property: the verdict reports print and systems declare
//! as their expectations.

/// What a search concluded.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verdict {
    /// `always`: no reachable state violates it. `sometimes`: a reachable state satisfies it.
    Holds,
    /// `always`: a reachable state violates it. `sometimes`: no reachable state satisfies it.
    Violated,
    /// A budget ran out first.
    Inconclusive,
}

impl Verdict {
    /// The name reports use.
    pub const fn name(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::Violated => "violated",
            Verdict::Inconclusive => "inconclusive",
        }
    }
}
