//! The trace variables of PostgreSQL's WAL pointers and a logical slot, declared once (name,
//! kind, one-line doc) for every system that shows them, and their values.

use walcheck_model::pg::Slot;

use crate::system::{var, ToVar, Var, VarInfo};

/// PostgreSQL 15 `xlog.c`'s `XLogCtl->Insert.CurrBytePos`, as `GetXLogInsertRecPtr` reports it.
pub const INSERT: VarInfo = var(
    "insert",
    "LSN",
    "the WAL insert pointer: the end of the WAL reserved so far",
);
/// `XLogCtl->LogwrtResult.Write`: what `pg_current_wal_lsn()` returns on a primary.
pub const WRITE: VarInfo = var(
    "write",
    "LSN",
    "the WAL write pointer: WAL handed to the kernel; pg_current_wal_lsn() on a primary",
);
/// `XLogCtl->LogwrtResult.Flush`: what a walsender sends up to, and what slot advance clamps to.
pub const FLUSH: VarInfo = var(
    "flush",
    "LSN",
    "the WAL flush pointer: WAL durably on disk; the walsender sends and slot advance clamps up to here",
);
/// The slot's `confirmed_flush` in shared memory (`ReplicationSlot.data.confirmed_flush`).
pub const CONFIRMED_FLUSH: VarInfo = var(
    "confirmed_flush",
    "LSN",
    "the slot's confirmed_flush_lsn in shared memory",
);
/// The slot's `restart_lsn` in shared memory.
pub const RESTART_LSN: VarInfo = var(
    "restart_lsn",
    "LSN",
    "the slot's restart_lsn in shared memory: the oldest WAL it keeps",
);
/// The slot's `confirmed_flush` as `slot.c:SaveSlotToPath` last wrote it.
pub const SAVED_CONFIRMED_FLUSH: VarInfo = var(
    "saved_confirmed_flush",
    "LSN",
    "the slot's confirmed_flush_lsn on disk, as last saved: what a PostgreSQL crash restores",
);
/// The slot's `restart_lsn` as last saved.
pub const SAVED_RESTART_LSN: VarInfo = var(
    "saved_restart_lsn",
    "LSN",
    "the slot's restart_lsn on disk, as last saved",
);

/// A slot's four variables, declared together: `confirmed_flush`, `restart_lsn` and their saved
/// copies, in the order [`slot`] gives their values.
pub const SLOT: [VarInfo; 4] = [
    CONFIRMED_FLUSH,
    RESTART_LSN,
    SAVED_CONFIRMED_FLUSH,
    SAVED_RESTART_LSN,
];

/// The names of a slot's four variables ([`slot`]), for a sequence diagram's lanes.
pub const SLOT_NAMES: [&str; 4] = [
    CONFIRMED_FLUSH.name,
    RESTART_LSN.name,
    SAVED_CONFIRMED_FLUSH.name,
    SAVED_RESTART_LSN.name,
];

/// A slot's variables: `confirmed_flush`, `restart_lsn` and their saved copies, in that order.
pub fn slot(slot: &Slot) -> [(&'static str, Var); 4] {
    [
        (CONFIRMED_FLUSH.name, slot.confirmed_flush.to_var()),
        (RESTART_LSN.name, slot.restart_lsn.to_var()),
        (
            SAVED_CONFIRMED_FLUSH.name,
            slot.saved.confirmed_flush.to_var(),
        ),
        (SAVED_RESTART_LSN.name, slot.saved.restart_lsn.to_var()),
    ]
}
