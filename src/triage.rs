//! `walcheck triage electric-flush`: the hypotheses and fixes of Electric #4058, each settled by
//! checks this command runs on the `electric-flush` model, under both timer orders.
//!
//! A hypothesis gets three checks:
//! - **occurs**: does its mechanism happen at all in the faithful 1.4.15 model (a `sometimes`
//!   check, `occurs-hN`)?
//! - **possible**: is a notification lost on a path where it happened, in 1.4.15
//!   (`lost-after-hN`)?
//! - **sufficient**: does it lose one on its own — in `pr4064`, which loses nothing otherwise,
//!   with the mechanism injected as a fault where the faithful code never does it (H1: the
//!   hibernate's `:flushed` dropped; H4: the hibernate flush drains silently), or as it happens
//!   naturally (H2, H3)?
//!
//! A fix is checked as a variant: `no-lost-flush-notification` and `wal-retention-bounded` with
//! no faults — *prevents* if both hold.

use serde_json::{json, Value};
use stateright::Model;
use walcheck_model::electric::consumer::Injection;
use walcheck_model::electric::Variant;
use walcheck_systems::electric_flush::{Config, ElectricFlush, Faults, TimerOrder};
use walcheck_systems::electric_flush::{
    LOST_AFTER_H1, LOST_AFTER_H2, LOST_AFTER_H3, LOST_AFTER_H4, LOST_AFTER_INJECTION,
    NO_LOST_FLUSH_NOTIFICATION, OCCURS_H1, OCCURS_H2, OCCURS_H3, OCCURS_H4, WAL_RETENTION_BOUNDED,
};

use crate::reference;
use crate::report::table;
use crate::search::{Budget, Verdict};

/// One check's outcome.
#[derive(Clone, Debug)]
pub struct Finding {
    pub property: &'static str,
    pub verdict: Verdict,
    pub unique_states: u64,
    /// Steps of the counterexample or witness, if one was found.
    pub steps: Option<usize>,
}

impl Finding {
    fn json(&self) -> Value {
        json!({ "property": self.property, "verdict": self.verdict.name(), "unique_states": self.unique_states, "steps": self.steps })
    }
}

/// A hypothesis of #4058 under one timer order.
#[derive(Clone, Debug)]
pub struct HypothesisRow {
    pub id: &'static str,
    pub claim: &'static str,
    pub timer_order: &'static str,
    pub occurs: Finding,
    pub possible: Finding,
    pub sufficient: Finding,
}

impl HypothesisRow {
    /// One sentence from the verdicts; `baseline_loses` says whether `pr4064` loses a
    /// notification under this timer order without any injection.
    pub fn conclusion(&self, baseline_loses: bool) -> String {
        let occurs = self.occurs.verdict == Verdict::Holds;
        let possible = self.possible.verdict == Verdict::Violated;
        let sufficient = self.sufficient.verdict == Verdict::Violated;
        let mut text = match (occurs, possible) {
            (false, _) => "its mechanism never happens in the faithful 1.4.15 model".to_owned(),
            (true, true) => "happens, and 1.4.15 loses a notification on such paths".to_owned(),
            (true, false) => "happens, but no loss follows it in 1.4.15".to_owned(),
        };
        text.push_str(match (sufficient, baseline_loses) {
            (true, true) => "; pr4064 itself loses under this order (the stale write_timer), so whether it suffices alone is not separable here",
            (true, false) => "; on its own, in pr4064, it loses a notification",
            (false, _) => "; on its own, in pr4064, it loses nothing",
        });
        text
    }
}

/// A fix (or landed variant) under one timer order.
#[derive(Clone, Debug)]
pub struct FixRow {
    pub variant: Variant,
    pub timer_order: &'static str,
    pub no_lost: Finding,
    pub retention: Finding,
}

impl FixRow {
    pub fn prevents(&self) -> bool {
        self.no_lost.verdict == Verdict::Holds && self.retention.verdict == Verdict::Holds
    }
}

fn decide(config: Config, property: &'static str, budget: &Budget) -> Finding {
    let model = ElectricFlush::from(config);
    let prop = model
        .properties()
        .into_iter()
        .find(|p| p.name == property)
        .expect("a known property");
    let outcome = reference::check(&model, &prop, budget).expect("an always or sometimes property");
    Finding {
        property,
        verdict: outcome.verdict,
        unique_states: outcome.unique_states,
        steps: outcome.path.map(|p| p.steps.len()),
    }
}

/// Triage runs with a third transaction, so that a shape meets a second transaction while an
/// older one's entry is still in its mapping (H2 needs that).
pub const TRIAGE_TXNS: u8 = 3;

const HYPOTHESES: [(&str, &str, Injection); 4] = [
    ("H1", "the :flushed queued by the hibernate flush is lost across hibernation", Injection::DropFlushedAtHibernate),
    ("H2", "a later, higher flush makes align drop older mapping entries without notifying their boundaries", Injection::None),
    ("H3", "the scheduled flush runs between a transaction's fragments, before signal_txn_commit!", Injection::None),
    ("H4", "an empty-buffer flush is a no-op while a notification is still owed", Injection::SilentDrainAtHibernate),
];

/// Runs every triage check. Deterministic: the same rows, in the same order, every time.
pub fn triage(budget: &Budget) -> (Vec<HypothesisRow>, Vec<FixRow>) {
    let orders = [
        (TimerOrder::Realistic, "realistic"),
        (TimerOrder::Any, "any"),
    ];
    let mut hypotheses = Vec::new();
    for (n, (id, claim, injection)) in HYPOTHESES.into_iter().enumerate() {
        let occurs_prop = [OCCURS_H1, OCCURS_H2, OCCURS_H3, OCCURS_H4][n].id;
        let lost_prop = [LOST_AFTER_H1, LOST_AFTER_H2, LOST_AFTER_H3, LOST_AFTER_H4][n].id;
        for (order, order_name) in orders {
            let faithful = Config {
                timer_order: order,
                txns: TRIAGE_TXNS,
                ..Config::new(Variant::V1_4_15, Faults::None)
            };
            let fixed = Config {
                timer_order: order,
                txns: TRIAGE_TXNS,
                injection,
                ..Config::new(Variant::Pr4064, Faults::None)
            };
            let sufficient_prop = if injection == Injection::None {
                lost_prop
            } else {
                LOST_AFTER_INJECTION.id
            };
            hypotheses.push(HypothesisRow {
                id,
                claim,
                timer_order: order_name,
                occurs: decide(faithful, occurs_prop, budget),
                possible: decide(faithful, lost_prop, budget),
                sufficient: decide(fixed, sufficient_prop, budget),
            });
        }
    }
    let mut fixes = Vec::new();
    for variant in [
        Variant::Fix1NotifyAfterHibernate,
        Variant::Fix2CloseReturnsOffset,
        Variant::Fix3PeriodicRecheck,
        Variant::Fix4FlushReturnsOffset,
        Variant::Pr4064,
        Variant::Head,
    ] {
        for (order, order_name) in orders {
            let config = Config {
                timer_order: order,
                txns: TRIAGE_TXNS,
                ..Config::new(variant, Faults::None)
            };
            fixes.push(FixRow {
                variant,
                timer_order: order_name,
                no_lost: decide(config, NO_LOST_FLUSH_NOTIFICATION.id, budget),
                retention: decide(config, WAL_RETENTION_BOUNDED.id, budget),
            });
        }
    }
    (hypotheses, fixes)
}

fn cell(f: &Finding, found: &str, not_found: &str) -> String {
    match (f.verdict, f.steps) {
        (Verdict::Inconclusive, _) => format!("inconclusive ({} states)", f.unique_states),
        (_, Some(steps)) => format!("{found} ({})", crate::report::steps(steps)),
        (_, None) => format!("{not_found} ({} states)", f.unique_states),
    }
}

/// The triage as text tables: hypotheses, then fixes, then the claims.
/// Whether `pr4064` alone loses a notification under `timer_order` (its fix row).
fn baseline_loses(fixes: &[FixRow], timer_order: &str) -> bool {
    fixes.iter().any(|f| {
        f.variant == Variant::Pr4064
            && f.timer_order == timer_order
            && f.no_lost.verdict == Verdict::Violated
    })
}

pub fn text(hypotheses: &[HypothesisRow], fixes: &[FixRow]) -> String {
    let mut rows = vec![[
        "hypothesis",
        "timer order",
        "occurs in v1.4.15",
        "possible (loss after it)",
        "sufficient (alone, in pr4064)",
        "conclusion",
    ]
    .map(String::from)
    .to_vec()];
    for h in hypotheses {
        rows.push(vec![
            h.id.to_owned(),
            h.timer_order.to_owned(),
            cell(&h.occurs, "yes", "never"),
            cell(&h.possible, "possible", "impossible"),
            cell(&h.sufficient, "sufficient", "not sufficient"),
            h.conclusion(baseline_loses(fixes, h.timer_order)),
        ]);
    }
    let mut out = table(&rows);
    out.push('\n');
    let mut rows = vec![[
        "fix",
        "timer order",
        NO_LOST_FLUSH_NOTIFICATION.id,
        WAL_RETENTION_BOUNDED.id,
        "verdict",
    ]
    .map(String::from)
    .to_vec()];
    for f in fixes {
        rows.push(vec![
            f.variant.name().to_owned(),
            f.timer_order.to_owned(),
            cell(&f.no_lost, "violated", "holds"),
            cell(&f.retention, "violated", "holds"),
            if f.prevents() {
                "prevents".into()
            } else {
                "does not prevent".into()
            },
        ]);
    }
    out.push_str(&table(&rows));
    out.push('\n');
    for (id, claim, _) in HYPOTHESES {
        out.push_str(&format!("{id}: {claim}\n"));
    }
    out
}

/// The triage as `walcheck.triage/1` JSON.
pub fn json(hypotheses: &[HypothesisRow], fixes: &[FixRow]) -> Value {
    let hypotheses: Vec<Value> = hypotheses
        .iter()
        .map(|h| {
            json!({
                "id": h.id, "claim": h.claim, "timer_order": h.timer_order,
                "occurs": h.occurs.json(), "possible": h.possible.json(), "sufficient": h.sufficient.json(),
                "conclusion": h.conclusion(baseline_loses(fixes, h.timer_order)),
            })
        })
        .collect();
    let fixes: Vec<Value> = fixes
        .iter()
        .map(|f| {
            json!({
                "variant": f.variant.name(), "timer_order": f.timer_order,
                "no_lost_flush_notification": f.no_lost.json(), "wal_retention_bounded": f.retention.json(),
                "verdict": if f.prevents() { "prevents" } else { "does not prevent" },
            })
        })
        .collect();
    json!({ "schema": "walcheck.triage/1", "system": "electric-flush", "hypotheses": hypotheses, "fixes": fixes })
}
