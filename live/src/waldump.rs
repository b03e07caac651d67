//! `pg_waldump`'s lines as records: where a rule needs WAL record boundaries the replication
//! protocol does not show (the running-xacts records that give a slot its candidate
//! `restart_lsn`).

use walcheck_model::Lsn;

/// One WAL record as `pg_waldump` prints it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalRecord {
    /// The resource manager (`Heap`, `Transaction`, `Standby`, `XLOG`, …).
    pub rmgr: String,
    /// The transaction that logged it (`tx:`; 0 for none).
    pub xid: u32,
    /// The record's start.
    pub lsn: Lsn,
    /// Its length with its block images (`len (rec/tot)`'s second figure), before alignment.
    pub total_bytes: u64,
    /// The description (`COMMIT …`, `RUNNING_XACTS nextXid …`).
    pub desc: String,
}

/// PostgreSQL 15 `xlog_internal.h`: `SizeOfXLogShortPHD`, the header at the start of every WAL
/// page but a segment's first, and `SizeOfXLogLongPHD`, the first page's, in bytes (MAXALIGNed
/// on 64-bit machines).
pub const SHORT_PAGE_HEADER_BYTES: u64 = 24;
pub const LONG_PAGE_HEADER_BYTES: u64 = 40;

impl WalRecord {
    /// Where the record ends: its `total_bytes` laid out from its start, skipping the page
    /// header at each page boundary it crosses (a long one at a segment's start).
    ///
    /// PostgreSQL 15 `xlog.c:CopyXLogRecordToWAL` copies a record into the WAL buffers page by
    /// page, each continuation after the next page's header; `EndRecPtr` is where it stops.
    pub fn end(&self, page_bytes: u64, segment_bytes: u64) -> Lsn {
        let mut at = self.lsn.bytes();
        let mut left = self.total_bytes;
        loop {
            let room = page_bytes - at % page_bytes;
            if left <= room {
                return Lsn(at + left);
            }
            left -= room;
            at += room;
            at += if at % segment_bytes == 0 {
                LONG_PAGE_HEADER_BYTES
            } else {
                SHORT_PAGE_HEADER_BYTES
            };
        }
    }

    /// Where the record ends as the reader reports it (`xlogreader.c` `EndRecPtr`), on a server
    /// of [`WAL_PAGE_BYTES`] pages and PostgreSQL's segments: PostgreSQL 15
    /// `xlog.c:ReserveXLogInsertLocation` reserves `MAXALIGN(size)` usable bytes, so the end is
    /// the aligned length laid out past the page headers ([`WalRecord::end`]).
    pub fn aligned_end(&self) -> Lsn {
        let aligned = WalRecord {
            total_bytes: walcheck_model::pg::txn::maxalign(self.total_bytes),
            ..self.clone()
        };
        aligned.end(WAL_PAGE_BYTES, walcheck_model::pg::wal::WAL_SEGMENT_BYTES)
    }

    /// An `xl_running_xacts` record logged with no transaction running (PostgreSQL 15
    /// `standbydesc.c:standby_desc_running_xacts` lists running ones as `; N xacts: …`).
    pub fn is_idle_running_xacts(&self) -> bool {
        self.rmgr == "Standby"
            && self.desc.starts_with("RUNNING_XACTS")
            && !self.desc.contains("xacts:")
    }

    /// The top-level transactions an `xl_running_xacts` record lists as running (`None` for
    /// any other record): PostgreSQL 15 `standbydesc.c:standby_desc_running_xacts` prints them
    /// as `; N xacts: X Y …`, before any `; subxid overflowed` or `; M subxacts: …`.
    pub fn running_xids(&self) -> Option<Vec<u32>> {
        if self.rmgr != "Standby" || !self.desc.starts_with("RUNNING_XACTS") {
            return None;
        }
        let listed = self
            .desc
            .split(';')
            .find_map(|part| part.trim().split_once(" xacts:"))
            .map_or("", |(_, xids)| xids);
        Some(
            listed
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect(),
        )
    }
}

/// Parses one line, `rmgr: Standby len (rec/tot): 50/ 50, tx: 0, lsn: 0/0151FA90, prev …, desc:
/// RUNNING_XACTS …`; `None` for anything else.
pub fn parse_line(line: &str) -> Option<WalRecord> {
    let rest = line.strip_prefix("rmgr:")?.trim_start();
    let (rmgr, rest) = rest.split_once(char::is_whitespace)?;
    let (_, len) = rest.split_once("len (rec/tot):")?;
    let (len, rest) = len.split_once(',')?;
    let total_bytes = len.split_once('/')?.1.trim().parse().ok()?;
    let (_, tx) = rest.split_once("tx:")?;
    let xid = tx.split_once(',')?.0.trim().parse().ok()?;
    let (_, lsn) = rest.split_once("lsn:")?;
    let (lsn, rest) = lsn.split_once(',')?;
    let (_, desc) = rest.split_once("desc:")?;
    Some(WalRecord {
        rmgr: rmgr.to_owned(),
        xid,
        lsn: lsn.trim().parse().ok()?,
        total_bytes,
        desc: desc.trim().to_owned(),
    })
}

/// The WAL page size of the servers walcheck starts (PostgreSQL's build default `XLOG_BLCKSZ`).
pub const WAL_PAGE_BYTES: u64 = 8192;

/// The end of the last record inserted (the reader's `EndRecPtr` after it: a decoded
/// transaction's `end_lsn`), from the insert pointer read once it was inserted, on a server of
/// `page_bytes` pages and `segment_bytes` segments.
///
/// PostgreSQL 15 `xlog.c:GetXLogInsertRecPtr` (`pg_current_wal_insert_lsn()`) converts the
/// insert position with `XLogBytePosToRecPtr`, which puts a position at a page boundary past
/// the next page's header, where the next record would start; the end of a record that fills
/// its page to the boundary is the boundary itself (`XLogBytePosToEndRecPtr`, as
/// `xlogreader.c` reports it).
pub fn record_end(insert: Lsn, page_bytes: u64, segment_bytes: u64) -> Lsn {
    let at = insert.bytes();
    if at % segment_bytes == LONG_PAGE_HEADER_BYTES {
        Lsn(at - LONG_PAGE_HEADER_BYTES)
    } else if at % segment_bytes > LONG_PAGE_HEADER_BYTES
        && at % page_bytes == SHORT_PAGE_HEADER_BYTES
    {
        Lsn(at - SHORT_PAGE_HEADER_BYTES)
    } else {
        insert
    }
}

/// The start and end of transaction `xid`'s commit record among `records`: where the record
/// really lies, whatever other backends logged around it.
///
/// The record's end is the decoded transaction's `end_lsn` ([`WalRecord::aligned_end`]).
pub fn commit_record(records: &[WalRecord], xid: u32) -> Option<(Lsn, Lsn)> {
    records
        .iter()
        .find(|r| r.xid == xid && r.rmgr == "Transaction" && r.desc.starts_with("COMMIT"))
        .map(|r| (r.lsn, r.aligned_end()))
}

/// The records among `records` that log transaction `xid`'s new heap rows, in WAL order, each
/// with whether it is a multi-insert: `Heap` `INSERT` records (one row each) and `Heap2`
/// `MULTI_INSERT` records (the rows of one page), `+INIT` when the record initialises its page.
///
/// PostgreSQL 15 `heapdesc.c:heap_identify`, `heap2_identify` name them; `pg_waldump` prints
/// the name first after `desc:`, as the lines [`crate::wal_reader`] makes of pg_walinspect's do.
pub fn row_records(records: &[WalRecord], xid: u32) -> Vec<(&WalRecord, bool)> {
    let kind = |r: &WalRecord| r.desc.split_whitespace().next().unwrap_or("").to_owned();
    records
        .iter()
        .filter(|r| r.xid == xid)
        .filter_map(|r| match (r.rmgr.as_str(), kind(r).as_str()) {
            ("Heap", "INSERT" | "INSERT+INIT") => Some((r, false)),
            ("Heap2", "MULTI_INSERT" | "MULTI_INSERT+INIT") => Some((r, true)),
            _ => None,
        })
        .collect()
}

/// Every record line of `pg_waldump`'s output, in WAL order.
pub fn parse(output: &str) -> Vec<WalRecord> {
    output.lines().filter_map(parse_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines as PostgreSQL 15.20's `pg_waldump` printed them around a one-row INSERT.
    const OUTPUT: &str = "\
rmgr: Heap        len (rec/tot):     80/    80, tx:        725, lsn: 0/0151FA10, prev 0/0151F5C8, desc: INSERT+INIT off 1 flags 0x08, blkref #0: rel 1663/5/16384 blk 0
rmgr: Transaction len (rec/tot):     46/    46, tx:        725, lsn: 0/0151FA60, prev 0/0151FA10, desc: COMMIT 2026-12-01 13:37:07.300829 UTC
rmgr: Standby     len (rec/tot):     50/    50, tx:          0, lsn: 0/0151FA90, prev 0/0151FA60, desc: RUNNING_XACTS nextXid 726 latestCompletedXid 725 oldestRunningXid 726
rmgr: Standby     len (rec/tot):     54/    54, tx:          0, lsn: 0/0151FAC8, prev 0/0151FA90, desc: RUNNING_XACTS nextXid 727 latestCompletedXid 725 oldestRunningXid 726; 1 xacts: 726
pg_waldump: error: error in WAL record at 0/151FB00: invalid record length at 0/151FB00: wanted 24, got 0
";

    #[test]
    fn records_are_read_with_their_kind_start_and_length() {
        let records = parse(OUTPUT);
        assert_eq!(records.len(), 4);
        assert_eq!(records[1].rmgr, "Transaction");
        assert_eq!(records[1].lsn, Lsn(0x151_FA60));
        assert_eq!(records[1].total_bytes, 46);
        assert!(records[1].desc.starts_with("COMMIT"));
    }

    #[test]
    fn a_running_xacts_record_lists_its_running_transactions() {
        let records = parse(OUTPUT);
        assert_eq!(records[0].running_xids(), None);
        assert_eq!(records[2].running_xids(), Some(vec![]));
        assert_eq!(records[3].running_xids(), Some(vec![726]));
        let with_subxacts = WalRecord {
            desc: "RUNNING_XACTS nextXid 741 latestCompletedXid 737 oldestRunningXid 738; 2 \
                   xacts: 738 740; 1 subxacts: 739"
                .into(),
            ..records[3].clone()
        };
        assert_eq!(with_subxacts.running_xids(), Some(vec![738, 740]));
    }

    #[test]
    fn a_record_ending_at_a_page_boundary_ends_at_it_not_past_the_next_header() {
        const PAGE: u64 = 8192;
        const SEGMENT: u64 = 16 * 1024 * 1024;
        // The failure this mends: a commit record ending at 0/8802000, the insert pointer then
        // reading 0/8802018.
        assert_eq!(record_end(Lsn(0x880_2018), PAGE, SEGMENT), Lsn(0x880_2000));
        // At a segment's start the header is the long one.
        assert_eq!(record_end(Lsn(0x900_0028), PAGE, SEGMENT), Lsn(0x900_0000));
        // Anywhere else the insert pointer is the end.
        assert_eq!(record_end(Lsn(0x880_1FD0), PAGE, SEGMENT), Lsn(0x880_1FD0));
        assert_eq!(record_end(Lsn(0x880_2030), PAGE, SEGMENT), Lsn(0x880_2030));
        // 24 bytes into a segment's first page is inside its long header: no record ends there.
        assert_eq!(record_end(Lsn(0x900_0018), PAGE, SEGMENT), Lsn(0x900_0018));
    }

    #[test]
    fn a_record_ending_in_a_pages_last_bytes_ends_for_the_reader_on_the_boundary() {
        // Seen on 15.12: the flush pointer on the page boundary 0/13E3C000, the record before it
        // ending 6 bytes short; an advance to the boundary returned at once, because
        // `xlogreader.c:XLogDecodeNextRecord` (15) sets `NextRecPtr = RecPtr + MAXALIGN(total_len)`
        // and the advance stops once `EndRecPtr >= moveto`.
        let record = WalRecord {
            rmgr: "Heap".into(),
            xid: 1,
            lsn: Lsn(0x13E3_BFC8),
            total_bytes: 50,
            desc: String::new(),
        };
        assert_eq!(record.end(WAL_PAGE_BYTES, 16 << 20), Lsn(0x13E3_BFFA));
        assert_eq!(record.aligned_end(), Lsn(0x13E3_C000));
        let after = Lsn(0x13E3_C43F);
        let read_end = walcheck_model::pg::slot::advance_read_end(
            Lsn(0x13E3_C000),
            [record.aligned_end(), after],
        );
        assert_eq!(read_end, Lsn(0x13E3_C000));
        assert!(!walcheck_model::pg::slot::advance_waits(
            Lsn(0x13E3_C000),
            read_end
        ));
    }

    #[test]
    fn a_record_ends_past_the_page_headers_it_crosses() {
        let record = |lsn: u64, total_bytes: u64| WalRecord {
            rmgr: "Heap".into(),
            xid: 1,
            lsn: Lsn(lsn),
            total_bytes,
            desc: String::new(),
        };
        const PAGE: u64 = 8192;
        const SEGMENT: u64 = 16 * 1024 * 1024;
        // Within its page.
        assert_eq!(record(0x151_FA10, 80).end(PAGE, SEGMENT), Lsn(0x151_FA60));
        // 100 bytes before a page boundary, 1,067 long: 967 bytes after the next page's header.
        let start = 0x200_0000 - 100 + PAGE;
        assert_eq!(
            record(start, 1_067).end(PAGE, SEGMENT),
            Lsn(start + 100 + SHORT_PAGE_HEADER_BYTES + 967)
        );
        // Across a segment's start: its first page has the long header.
        let start = 0x300_0000 - 100;
        assert_eq!(
            record(start, 1_067).end(PAGE, SEGMENT),
            Lsn(0x300_0000 + LONG_PAGE_HEADER_BYTES + 967)
        );
        // Ending exactly on a page boundary: no header added.
        assert_eq!(
            record(0x200_0000 - 100, 100).end(PAGE, SEGMENT),
            Lsn(0x200_0000)
        );
    }

    #[test]
    fn a_transactions_row_records_are_its_heap_inserts_and_multi_inserts() {
        let lines = format!(
            "{OUTPUT}\
rmgr: Heap2       len (rec/tot):    153/   153, tx:        726, lsn: 0/0151FB00, prev 0/0151FAC8, desc: MULTI_INSERT 3 tuples flags 0x02, blkref #0: rel 1663/5/16384 blk 0
rmgr: Heap        len (rec/tot):     80/    80, tx:        726, lsn: 0/0151FBA0, prev 0/0151FB00, desc: INSERT off 5 flags 0x00, blkref #0: rel 1663/5/16384 blk 0
"
        );
        let records = parse(&lines);
        let starts = |xid| -> Vec<(Lsn, bool)> {
            row_records(&records, xid)
                .iter()
                .map(|(r, multi)| (r.lsn, *multi))
                .collect()
        };
        assert_eq!(starts(725), [(Lsn(0x151_FA10), false)]);
        assert_eq!(
            starts(726),
            [(Lsn(0x151_FB00), true), (Lsn(0x151_FBA0), false)]
        );
        assert!(starts(0).is_empty());
    }

    #[test]
    fn only_a_running_xacts_record_without_running_transactions_is_idle() {
        let idle: Vec<Lsn> = parse(OUTPUT)
            .iter()
            .filter(|r| r.is_idle_running_xacts())
            .map(|r| r.lsn)
            .collect();
        assert_eq!(idle, [Lsn(0x151_FA90)]);
    }
}
