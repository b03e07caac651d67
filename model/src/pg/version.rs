//! Which PostgreSQL release a rule is for: the behaviours that differ between the versions the
//! live rules confirm (15.12, 15.18, 16, 17, 18; docs/live.md), each a predicate here that the
//! rule it changes asks.

use serde::{Deserialize, Serialize};

/// A PostgreSQL release as `server_version_num` gives it: 150018 for 15.18, 170010 for 17.10.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PgVersion(pub u32);

impl PgVersion {
    /// Debian 12's PostgreSQL 15.18, the release the model was first confirmed on.
    pub const DEBIAN_15: PgVersion = PgVersion(150_018);

    /// The newest minor of `major` as far as these rules go (any release with every fix below).
    pub const fn latest_of(major: u32) -> PgVersion {
        PgVersion(major * 10_000 + 99)
    }

    /// The major version: 15 for 15.18.
    pub const fn major(self) -> u32 {
        self.0 / 10_000
    }

    /// Whether `LogicalConfirmReceivedLocation` keeps `confirmed_flush` from moving backwards.
    ///
    /// PostgreSQL `logical.c:LogicalConfirmReceivedLocation` sets `confirmed_flush = lsn` only
    /// when `lsn > confirmed_flush` ("Prevent moving the confirmed_flush backwards") from the
    /// August 2025 minors: 15.14, 16.10, 17.6, and in 18; before them a status update below it
    /// moved it back (live rule `status_update_never_backwards`, confirmed backwards on 15.12).
    pub const fn confirms_forward_only(self) -> bool {
        match self.major() {
            ..=15 => self.0 >= 150_014,
            16 => self.0 >= 160_010,
            17 => self.0 >= 170_006,
            _ => true,
        }
    }

    /// Whether a shutdown checkpoint saves a logical slot whose `confirmed_flush` moved since its
    /// last save, dirty or not.
    ///
    /// PostgreSQL 17 `slot.c:CheckPointReplicationSlots(is_shutdown)` marks such a slot dirty
    /// (`confirmed_flush > last_saved_confirmed_flush`) before `SaveSlotToPath`; 15 and 16 save
    /// dirty slots only (live rules `status_update_not_saved` and
    /// `shutdown_keepalive_requests_reply`, confirmed on 17.10 and 18.4).
    pub const fn saves_confirmed_flush_at_shutdown(self) -> bool {
        self.major() >= 17
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backwards_confirmation_fix_arrived_in_each_majors_august_2025_minor() {
        assert!(!PgVersion(150_012).confirms_forward_only());
        assert!(!PgVersion(150_013).confirms_forward_only());
        assert!(PgVersion(150_014).confirms_forward_only());
        assert!(PgVersion::DEBIAN_15.confirms_forward_only());
        assert!(!PgVersion(160_009).confirms_forward_only());
        assert!(PgVersion(160_014).confirms_forward_only());
        assert!(!PgVersion(170_005).confirms_forward_only());
        assert!(PgVersion(170_010).confirms_forward_only());
        assert!(PgVersion(180_004).confirms_forward_only());
        assert!(PgVersion::latest_of(15).confirms_forward_only());
    }

    #[test]
    fn only_17_and_later_save_a_moved_confirmed_flush_at_shutdown() {
        assert!(!PgVersion::DEBIAN_15.saves_confirmed_flush_at_shutdown());
        assert!(!PgVersion(160_014).saves_confirmed_flush_at_shutdown());
        assert!(PgVersion(170_010).saves_confirmed_flush_at_shutdown());
        assert!(PgVersion(180_004).saves_confirmed_flush_at_shutdown());
    }
}
