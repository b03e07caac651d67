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

    /// Whether a checkpoint takes the slots' minimum `restart_lsn` for its WAL removal before it
    /// saves the slots, rather than after.
    ///
    /// PostgreSQL 15.18 `xlog.c:CreateCheckPoint` takes `slotsMinReqLSN =
    /// XLogGetReplicationSlotMinimumLSN()` before `CheckPointGuts` (which saves the dirty slots,
    /// `slot.c:CheckPointReplicationSlots`) and passes it to `KeepLogSeg`. Before the fix (15.13
    /// and earlier) `KeepLogSeg` read the in-memory minimum after `CheckPointGuts`, so a slot
    /// that moved its `restart_lsn` while the checkpoint ran could have WAL removed that its saved
    /// copy (what a crash restores) still needs. Fixed in REL_15_STABLE commit dd9bc1a17
    /// (2025-06-14, "Avoid premature removal of old WAL during checkpoints", release notes of
    /// 15.14), with 16's cea8f2c3e and 17's 2090edc6f on the same day: the August 2025 minors
    /// 15.14, 16.10, 17.6, as [`PgVersion::confirms_forward_only`]; 18 has master's fix
    /// (ca307d5c, another mechanism). Model-only: no live rule shows the race (docs/model.md).
    pub const fn checkpoint_keeps_slot_minimum_from_start(self) -> bool {
        match self.major() {
            ..=15 => self.0 >= 150_014,
            16 => self.0 >= 160_010,
            17 => self.0 >= 170_006,
            _ => true,
        }
    }

    /// The release `text` names: a major (`15`, its newest minor as far as these rules go,
    /// [`PgVersion::latest_of`]) or a major and minor (`15.12`); `None` for anything else (a
    /// minor of three digits or more or with a leading zero, `17.05`, a third part).
    pub fn from_release(text: &str) -> Option<PgVersion> {
        let digits =
            |t: &str| !t.is_empty() && t.len() <= 2 && t.bytes().all(|b| b.is_ascii_digit());
        match text.split_once('.') {
            None if digits(text) => Some(PgVersion::latest_of(text.parse().ok()?)),
            Some((major, minor))
                if digits(major) && digits(minor) && (minor == "0" || !minor.starts_with('0')) =>
            {
                Some(PgVersion(
                    major.parse::<u32>().ok()? * 10_000 + minor.parse::<u32>().ok()?,
                ))
            }
            _ => None,
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

    /// Whether a logical slot can be a failover slot, copied to a physical standby by its slot
    /// sync worker and usable there after a promotion.
    ///
    /// PostgreSQL 17 adds the `failover` option (`slotfuncs.c:pg_create_logical_replication_slot`),
    /// `sync_replication_slots` and the slot sync worker (`replication/logical/slotsync.c`), and
    /// `synchronized_standby_slots` (`walsender.c:NeedToWaitForStandbys`); 15 and 16 have none of
    /// them, so a promoted standby has no copy of the primary's logical slots.
    pub const fn has_failover_slots(self) -> bool {
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
    fn the_checkpoint_race_fix_arrived_with_the_backwards_confirmation_fix() {
        for v in [150_012, 150_013, 160_009, 170_005] {
            assert!(
                !PgVersion(v).checkpoint_keeps_slot_minimum_from_start(),
                "{v}"
            );
        }
        for v in [150_014, 150_018, 160_010, 170_006, 180_000] {
            assert!(
                PgVersion(v).checkpoint_keeps_slot_minimum_from_start(),
                "{v}"
            );
        }
        assert!(PgVersion::latest_of(15).checkpoint_keeps_slot_minimum_from_start());
    }

    #[test]
    fn a_release_is_a_major_or_a_major_and_minor() {
        assert_eq!(PgVersion::from_release("15.12"), Some(PgVersion(150_012)));
        assert_eq!(PgVersion::from_release("17.6"), Some(PgVersion(170_006)));
        assert_eq!(
            PgVersion::from_release("15"),
            Some(PgVersion::latest_of(15))
        );
        for bad in ["", "15.", ".12", "15.123", "15.12.1", "x", "15.a", "17.05"] {
            assert_eq!(PgVersion::from_release(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_17_and_later_save_a_moved_confirmed_flush_at_shutdown() {
        assert!(!PgVersion::DEBIAN_15.saves_confirmed_flush_at_shutdown());
        assert!(!PgVersion(160_014).saves_confirmed_flush_at_shutdown());
        assert!(PgVersion(170_010).saves_confirmed_flush_at_shutdown());
        assert!(PgVersion(180_004).saves_confirmed_flush_at_shutdown());
    }

    #[test]
    fn failover_slots_arrive_in_17() {
        assert!(!PgVersion::DEBIAN_15.has_failover_slots());
        assert!(!PgVersion(160_014).has_failover_slots());
        assert!(PgVersion(170_010).has_failover_slots());
        assert!(PgVersion(180_004).has_failover_slots());
    }
}
