//! walcheck's built-in checkable systems, `olake-bootstrap`, `olake-sync` and `electric-flush`:
//! each a `System` written by hand as any other is (its declaration, with its properties, bounds
//! and trace view; its typed configuration, states, actions and transitions; its expectation
//! table), built from the upstream behaviours of `walcheck-model`.
//!
//! Not for: the upstream behaviours themselves (`walcheck-model`) or checking (`walcheck-engine`).

use walcheck_properties::system::{PropertyInfo, SystemInfo};
use walcheck_properties::verdict::Verdict;

/// A built-in system's [`System::expected`](walcheck_properties::system::System::expected) from
/// its expectation table: `verdict` of `property` where the table has a row for it (`rows`), a
/// one-line error where it has none.
fn expectation(
    info: &SystemInfo,
    rows: &[&str],
    property: &PropertyInfo,
    verdict: impl FnOnce() -> (Verdict, &'static str),
) -> Option<Result<(Verdict, &'static str), String>> {
    let row = rows.contains(&property.id).then(verdict);
    Some(row.ok_or_else(|| {
        format!(
            "{} has no expectation for property {}",
            info.name, property.id
        )
    }))
}

/// The built-in systems, one line each, `folder::System`, in catalogue order: each folder's
/// module, and [`each_built_in`], which the registry reads.
macro_rules! built_in {
    ($($folder:ident::$system:ident,)*) => {
        $(pub mod $folder;)*

        /// Hands each built-in system to `visit`, in catalogue order.
        pub fn each_built_in(visit: &mut impl walcheck_properties::system::VisitSystems) {
            $(visit.visit(&$folder::$system);)*
        }
    };
}

built_in! {
    olake_bootstrap::OlakeBootstrapSystem,
    electric_flush::ElectricFlushSystem,
    olake_sync::OlakeSyncSystem,
}
