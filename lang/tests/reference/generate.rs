//! Well-typed connector files, written from a list of choices that proptest draws (and shrinks):
//! durable, volatile, `async` and `in destination` variables, counters and bools; `first run`,
//! `every run`, `after crash` and a procedure; labelled blocks, `if`/`else`, `retry`, `for each
//! message … until`; the PostgreSQL calls a primary answers (WAL pointers, the slot's row,
//! `identify_system`, an advance, `start_replication`, status updates), the destination's
//! `write` and `commit`, `flush`, `fail` and `fail fatal`; `always … when` and `sometimes`
//! properties reading the slot, the WAL, `in` and `at`; and small knobs. The shapes follow
//! `connectors/`: a stream that writes, commits and acknowledges, and a bootstrap that reads
//! the slot and advances it. About a third of the files also have one or two processes beside
//! `every run`, a timer (`arm`, `cancel`, `wait`), a channel of capacity 1 or 2 (`send`,
//! `receive`), `wait COND`, `either … or …`, `loop`s whose every path takes a step, `unfair`
//! steps, and now and then `eventually` and `leads to` properties and one reading the message.
//! Knobs draw `kills`, `call_failures` and `runs = unbounded`; processes are `killable` half the
//! time, calls that may fail get an `on error { … }` now and then (never in a labelled block), a
//! third of the concurrent files have a process family `fam[s in 1..2]` over a variable family
//! `f[1..2]`, and properties read `destination.holds`, `destination.duplicated`, `a.flushed`
//! and `m == none`. A quarter of the files decode by SQL (`pg_logical_slot_get_changes`,
//! `peek_changes`) into a `txns` variable the destination is written from. About half the files
//! allow a failover or two, and two thirds of those on PostgreSQL 17 or 18 sync the slot to
//! the standby (`failover_slots`). A third of the files read messages one by one (`env messages =
//! changes`, `rows` 1 to 3, `multi_insert` on or off, a transaction or two), half of them with
//! a stream for `every run`, and their loops write a change's row (`destination.write(m)`),
//! commit at `m.is_commit`, take `m.lsn` as a position, test `m.index` and acknowledge at
//! `m.lsn`; to keep their state spaces small, only a third of them have a standby and a fifth
//! processes. SQL decoding files now and then have several `rows` a transaction, which
//! `upto_nchanges` counts. Files call `backfill()` now and then (never in `procedure p`, so that
//! whether one runs in a `for each message` body is the text's). A quarter of the files let a
//! transaction stay open while the other commits (`env interleave = on`, two transactions),
//! reading messages one by one or not; as with messages one by one, only a third of them have a
//! standby and a fifth processes, and none a third run. A fifth of the files talk to a standby
//! (`env server = standby`, PostgreSQL 16 to 18, no failover knob): they read the replay
//! pointer (`pg_last_wal_replay_lsn()`, `wal.replay`) and `pg_is_in_recovery()`, and now and
//! then call a WAL function that fails there (`pg_current_wal_lsn()`). About a fifth of the files
//! let the walsender drop a stream with PostgreSQL up (`env stream_drops`, 1 and now and then 2;
//! fewer of those reading messages one by one or interleaving); their `for each message` loops
//! open a stream first most of the time and confirm `m.wal_end` now and then.

use std::fmt::Write;

/// The file's variables: (name, declaration).
const VARS: &[(&str, &str)] = &[
    ("v", "volatile v: lsn = none"),
    ("d", "durable d: lsn = none"),
    ("a", "durable a: lsn = none, async"),
    ("dd", "durable dd: lsn = none, in destination"),
    ("t", "volatile t: 0..2 = 0"),
    ("c", "durable c: 0..2 = 0"),
    ("b", "volatile b: bool = false"),
];

/// LSN variables an assignment may write.
const LSN_TARGETS: &[&str] = &["v", "d", "a"];

/// A file drawn from `choices`.
pub struct Gen {
    choices: Vec<u32>,
    at: usize,
    labels: usize,
    /// Labels of labelled blocks, for `in` and `at`.
    blocks: Vec<String>,
    has_procedure: bool,
    /// Processes, a timer `tm` and a channel `q` (of LSNs).
    concurrent: bool,
    /// Some `for each message m`: properties may read `m`.
    has_message: bool,
    /// The processes' names, for `in`.
    processes: Vec<String>,
    /// Inside a labelled block: no `on error` there.
    atomic: bool,
    /// A process family `fam[s in 1..2]` and a variable family `f[1..2]`.
    family: bool,
    /// SQL decoding into a `txns` variable `r`.
    sql: bool,
    /// `env messages = changes`.
    by_change: bool,
    /// `env interleave = on`.
    interleave: bool,
    /// `env rows`.
    rows: usize,
    /// In a `for each message m` body: conditions may read `m`'s fields.
    reading: bool,
    /// In `procedure p`: no `backfill()` there, so that whether one runs in a `for each
    /// message` body is the text's.
    in_procedure: bool,
    /// `env server = standby`.
    standby: bool,
    /// `env stream_drops` above 0.
    drops: bool,
    out: String,
}

impl Gen {
    fn pick(&mut self, n: usize) -> usize {
        let c = self.choices.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        c as usize % n
    }

    fn one<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.pick(of.len())]
    }

    fn lsn(&mut self, in_loop: bool) -> String {
        let mut of = vec!["v", "d", "a", "dd", "none", "max(v, d)", "min(a, v)", "0/0"];
        if in_loop {
            of.extend(["m.wal_end", "m.txn.end_lsn", "m.lsn"]);
        }
        self.one(&of).to_owned()
    }

    fn cond(&mut self, property: bool) -> String {
        let mut of = vec![
            "b",
            "not b",
            "v == none",
            "d >= v",
            "t < 2",
            "c == 1",
            "v != d",
            "a == d",
            "dd <= d or t == 0",
        ];
        if self.concurrent {
            of.extend(["tm", "not tm", "q == 0", "q > 0", "q < 2"]);
        }
        if self.reading && !property {
            of.extend([
                "m.is_change",
                "m.is_commit",
                "m.is_begin",
                "not m.is_keepalive",
                "m.index == 1",
                "m.index >= 2",
                "m.lsn > dd",
            ]);
        }
        if property {
            of.extend([
                "slot.confirmed_flush <= wal.flush",
                "d <= slot.confirmed_flush",
                "slot.restart_lsn == slot.confirmed_flush",
                "wal.write == wal.flush",
                "dd == none",
                "destination.duplicated == none",
                "destination.holds.end_lsn <= slot.confirmed_flush",
                "destination.holds == none",
                "a.flushed <= d",
                "a.flushed == a",
                // The slot's copy on disk: what saves it (an advance, a checkpoint, a status
                // update that moves restart_lsn, a clean stop) shows here first.
                "slot.saved_confirmed_flush == slot.confirmed_flush",
                "slot.saved_confirmed_flush < slot.confirmed_flush",
                "slot.saved_restart_lsn == slot.restart_lsn",
                "d <= slot.saved_confirmed_flush",
            ]);
            if self.has_message {
                of.extend(["m == none", "m != none"]);
            }
            if self.family {
                of.extend(["f[1] <= f[2]", "f[1] == none", "in fam", "in fam[2]"]);
            }
            if self.sql {
                of.extend(["r == none", "r.end_lsn <= slot.confirmed_flush"]);
            }
            if self.standby {
                of.extend([
                    "wal.replay == wal.flush",
                    "slot.confirmed_flush <= wal.replay",
                    "d <= wal.replay",
                    // For `leads to`: WAL the primary wrote is replayed in the end.
                    "wal.insert > 0/1000000",
                    "wal.replay > 0/1000000",
                ]);
            }
            let mut c = self.one(&of).to_owned();
            if !self.blocks.is_empty() && self.pick(3) == 0 {
                let i = self.pick(self.blocks.len());
                let word = self.one(&["in", "at", "not at"]);
                c = format!("{word} {}", self.blocks[i]);
            } else if self.has_procedure && self.pick(4) == 0 {
                c = "in p".to_owned();
            } else if !self.processes.is_empty() && self.pick(5) == 0 {
                let i = self.pick(self.processes.len());
                c = format!("in {}", self.processes[i]);
            }
            return c;
        }
        self.one(&of).to_owned()
    }

    fn line(&mut self, depth: usize, text: &str) {
        let _ = writeln!(self.out, "{}{text}", "  ".repeat(depth));
    }

    /// A simple statement: one step.
    fn simple(&mut self, depth: usize, in_loop: bool) {
        if self.sql && self.pick(4) == 0 {
            let text = match self.pick(6) {
                0 | 1 => "r = pg_logical_slot_get_changes()".to_owned(),
                2 => "r = pg_logical_slot_peek_changes()".to_owned(),
                // `env rows` above 1: the limit counts rows, not transactions.
                3 => format!(
                    "r = pg_logical_slot_get_changes(upto_nchanges = {})",
                    self.pick(1 + self.rows)
                ),
                // A target may still be `none` (0/0): no limit, as SQL's NULL.
                4 => format!(
                    "r = pg_logical_slot_get_changes(upto_lsn = {})",
                    self.one(LSN_TARGETS)
                ),
                _ => "destination.write(r)".to_owned(),
            };
            return self.call_line(depth, &text);
        }
        if !self.in_procedure && self.pick(25) == 0 {
            return self.call_line(depth, "backfill()");
        }
        let target = self.one(LSN_TARGETS);
        let text = match self.pick(if in_loop { 20 } else { 16 }) {
            // On a standby mostly the replay pointer; the WAL functions fail there.
            0 if self.standby && self.pick(3) != 0 => {
                format!("{target} = pg_last_wal_replay_lsn()")
            }
            1 if self.standby && self.pick(3) != 0 => "b = pg_is_in_recovery()".to_owned(),
            0 => format!("{target} = pg_current_wal_lsn()"),
            1 => format!("{target} = pg_current_wal_flush_lsn()"),
            2 => format!("{target} = pg_replication_slots().confirmed_flush_lsn"),
            3 => format!("{target} = identify_system().xlogpos"),
            4 => format!(
                "{target} = pg_replication_slot_advance({}).end_lsn",
                self.lsn(in_loop)
            ),
            5 => format!("pg_replication_slot_advance({})", self.lsn(in_loop)),
            6 => format!("{target} = {}", self.lsn(in_loop)),
            7 => format!("standby_status_update(flush = {})", self.lsn(in_loop)),
            8 => format!("destination.commit(dd = {})", self.lsn(in_loop)),
            9 => "destination.commit()".to_owned(),
            10 => format!("{} = {} + 1", self.one(&["t", "c"]), self.one(&["t", "c"])),
            11 => format!("{} = 0", self.one(&["t", "c"])),
            12 => format!("b = {}", self.cond(false)),
            13 => "flush a".to_owned(),
            14 if self.pick(3) == 0 => "fail \"retry later\"".to_owned(),
            14 => format!("{target} = pg_replication_slots().restart_lsn"),
            15 if self.pick(4) == 0 => "fail fatal \"stop\"".to_owned(),
            15 => "t = t - 1".to_owned(),
            16 if self.by_change => "destination.write(m)".to_owned(),
            16 | 17 => "destination.write(m.txn)".to_owned(),
            18 => format!("{target} = m.wal_end"),
            _ => format!("{target} = max({target}, m.txn.end_lsn)"),
        };
        self.call_line(depth, &text);
    }

    /// A statement, and an `on error { … }` after a call that may fail, now and then (never
    /// inside a labelled block: E13).
    fn call_line(&mut self, depth: usize, text: &str) {
        let fails = [
            "pg_",
            "identify_system",
            "standby_status_update",
            "destination.commit",
            "start_replication",
            "backfill",
        ]
        .iter()
        .any(|c| text.contains(c));
        if !fails || self.atomic || self.pick(3) != 0 {
            return self.line(depth, text);
        }
        self.line(depth, &format!("{text} on error {{"));
        let handler = self.one(&["fail \"the call failed\"", "b = true", "t = 0", "v = d"]);
        self.line(depth + 1, handler);
        if self.pick(3) == 0 {
            let c = self.cond(false);
            self.line(depth + 1, &format!("if {c} {{"));
            self.line(depth + 2, "c = 0");
            self.line(depth + 1, "}");
        }
        self.line(depth, "}");
    }

    /// What a loop that reads messages one by one does with one (changes.wal's shapes): writes
    /// a change's row, commits and acknowledges at the Commit, keeps `m.lsn`, tests `m.index`.
    fn message_step(&mut self, depth: usize) {
        let (cond, text) = match self.pick(7) {
            0 => ("m.is_change", "destination.write(m)".to_owned()),
            1 => ("", "destination.write(m)".to_owned()),
            2 => ("m.is_commit", "destination.commit(dd = m.lsn)".to_owned()),
            3 => (
                "m.is_commit or m.is_keepalive",
                "standby_status_update(flush = max(dd, m.lsn))".to_owned(),
            ),
            4 => (
                self.one(&["m.index == 1", "m.index >= 2", "m.is_change and m.lsn > dd"]),
                self.one(&["destination.commit(dd = m.lsn)", "t = t + 1", "v = m.lsn"])
                    .to_owned(),
            ),
            5 => ("", format!("{} = m.lsn", self.one(LSN_TARGETS))),
            _ => ("", "standby_status_update(flush = m.lsn)".to_owned()),
        };
        if cond.is_empty() {
            return self.call_line(depth, &text);
        }
        self.line(depth, &format!("if {cond} {{"));
        self.call_line(depth + 1, &text);
        self.line(depth, "}");
    }

    /// A labelled block: simple statements and `if`s, one step.
    fn labelled(&mut self, depth: usize, in_loop: bool) {
        self.labels += 1;
        let name = format!("step{}", self.labels);
        self.line(depth, &format!("{name}: {{"));
        let outer = self.atomic;
        self.atomic = true;
        for _ in 0..1 + self.pick(3) {
            if self.pick(4) == 0 {
                let c = self.cond(false);
                self.line(depth + 1, &format!("if {c} {{"));
                self.simple(depth + 2, in_loop);
                self.line(depth + 1, "}");
            } else if self.concurrent && self.pick(4) == 0 {
                // "Inside a labelled block, the choice is part of the block's one step."
                self.line(depth + 1, "either {");
                self.simple(depth + 2, in_loop);
                self.line(depth + 1, "} or {");
                self.simple(depth + 2, in_loop);
                self.line(depth + 1, "}");
            } else {
                self.simple(depth + 1, in_loop);
            }
        }
        self.atomic = outer;
        self.line(depth, "}");
        self.blocks.push(name);
    }

    /// A step of the concurrent constructs: a timer's, a channel's, a `wait`.
    fn concurrent_step(&mut self, depth: usize, in_loop: bool) {
        let unfair = if self.pick(6) == 0 { "unfair " } else { "" };
        let text = match self.pick(8) {
            0 => "arm tm".to_owned(),
            1 => "cancel tm".to_owned(),
            2 => "wait tm".to_owned(),
            3 => format!("wait {}", self.cond(false)),
            4 | 5 => format!("q.send({})", self.lsn(in_loop)),
            6 => format!("{} = q.receive()", self.one(LSN_TARGETS)),
            _ => "q.receive()".to_owned(),
        };
        self.line(depth, &format!("{unfair}{text}"));
    }

    /// A statement that is a step on every path (for `loop` bodies).
    fn step(&mut self, depth: usize, in_loop: bool) {
        match self.pick(3) {
            0 => self.concurrent_step(depth, in_loop),
            1 => self.labelled(depth, in_loop),
            _ => self.simple(depth, in_loop),
        }
    }

    /// `either { … } or { … } [or { … }]`, each branch often a guard first.
    fn either(&mut self, depth: usize, budget: usize, in_loop: bool, may_call: bool) {
        let branches = 2 + self.pick(3) / 2;
        for k in 0..branches {
            self.line(depth, if k == 0 { "either {" } else { "} or {" });
            if self.pick(2) == 0 {
                self.concurrent_step(depth + 1, in_loop);
            }
            self.block(depth + 1, budget, in_loop, may_call);
        }
        self.line(depth, "}");
    }

    /// `loop { … }`: a step first, so that every path through it takes one.
    fn endless(&mut self, depth: usize, in_loop: bool, may_call: bool) {
        self.line(depth, "loop {");
        self.step(depth + 1, in_loop);
        if self.pick(2) == 0 {
            self.block(depth + 1, 0, in_loop, may_call);
        }
        self.line(depth, "}");
    }

    /// A statement of any kind, nested at most `budget` deeper.
    fn stmt(&mut self, depth: usize, budget: usize, in_loop: bool, may_call: bool) {
        if self.concurrent && self.pick(3) == 0 {
            return match self.pick(3) {
                0 if budget > 0 => self.either(depth, budget - 1, in_loop, may_call),
                _ => self.concurrent_step(depth, in_loop),
            };
        }
        if in_loop && self.pick(if self.by_change { 2 } else { 6 }) == 0 {
            return self.message_step(depth);
        }
        // A drop matters most between a confirmation and the next save of the slot: files that
        // allow one confirm what they read now and then.
        if in_loop && self.drops && self.pick(4) == 0 {
            return self.call_line(depth, "standby_status_update(flush = m.wal_end)");
        }
        match self.pick(10) {
            0 if !in_loop => {
                let from = self.one(&["0/0", "d", "a", "dd"]);
                self.call_line(depth, &format!("start_replication({from})"));
            }
            1 => self.labelled(depth, in_loop),
            2 if may_call => self.line(depth, "p()"),
            3 if budget > 0 => {
                let c = self.cond(false);
                self.line(depth, &format!("if {c} {{"));
                self.block(depth + 1, budget - 1, in_loop, may_call);
                if self.pick(2) == 0 {
                    self.line(depth, "} else {");
                    self.block(depth + 1, budget - 1, in_loop, may_call);
                }
                self.line(depth, "}");
            }
            4 if budget > 0 => {
                let times = 1 + self.pick(3);
                self.line(depth, &format!("retry {times} times {{"));
                self.block(depth + 1, budget - 1, in_loop, may_call);
                let c = self.cond(false);
                self.line(depth, &format!("}} until {c}"));
            }
            5 if !in_loop && budget > 0 => {
                let until = match self.pick(3) {
                    0 => String::new(),
                    _ => format!(" until {}", self.cond(false)),
                };
                self.has_message = true;
                // Messages one by one come only on a stream, and only an open stream can drop:
                // open one first, most of the time.
                if (self.by_change || self.drops) && self.pick(3) != 0 {
                    let from = self.one(&["0/0", "d", "dd"]);
                    self.call_line(depth, &format!("start_replication({from})"));
                }
                self.line(depth, &format!("for each message m{until} {{"));
                let outer = self.reading;
                self.reading = true;
                self.block(depth + 1, budget - 1, true, may_call);
                self.reading = outer;
                self.line(depth, "}");
            }
            _ => self.simple(depth, in_loop),
        }
    }

    fn block(&mut self, depth: usize, budget: usize, in_loop: bool, may_call: bool) {
        for _ in 0..1 + self.pick(3) {
            self.stmt(depth, budget, in_loop, may_call);
        }
    }

    fn procedure(&mut self, head: &str, may_call: bool) {
        self.line(0, &format!("{head} {{"));
        // Messages one by one: half the time `every run` is a stream, as changes.wal's.
        if head == "every run" && self.by_change && self.pick(2) == 0 {
            self.has_message = true;
            let from = self.one(&["0/0", "d", "dd"]);
            self.call_line(1, &format!("start_replication({from})"));
            self.line(1, "for each message m {");
            self.reading = true;
            self.block(2, 1, true, may_call);
            self.reading = false;
            self.line(1, "}");
        }
        self.block(1, 2, false, may_call);
        // A server loop last, now and then.
        if self.concurrent && head != "procedure p" && self.pick(3) == 0 {
            self.endless(1, false, may_call);
        }
        self.line(0, "}");
    }

    /// `process wN { … }`: short, so that the interleavings stay few.
    fn process(&mut self, name: &str, may_call: bool) {
        let killable = if self.pick(2) == 0 { "killable " } else { "" };
        self.line(0, &format!("{killable}process {name} {{"));
        if self.pick(3) == 0 {
            // A spinner: a step that can always be taken, so that others may starve unless
            // fairness makes them go on.
            let spin = self.one(&["wait not b", "arm tm", "cancel tm", "t = 0"]);
            self.line(1, "loop {");
            self.line(2, spin);
            self.line(1, "}");
        } else if self.pick(2) == 0 {
            self.endless(1, false, may_call);
        } else {
            self.block(1, 1, false, may_call);
        }
        self.line(0, "}");
    }
}

/// `process fam[s in 1..2]` over `f[1..2]`: a resume step, then a loop that takes from the
/// channel or the timer and folds into its member's `f[s]`.
fn family(g: &mut Gen) {
    let killable = if g.pick(2) == 0 { "killable " } else { "" };
    g.line(0, &format!("{killable}process fam[s in 1..2] {{"));
    if g.pick(2) == 0 {
        let from = g.one(&["d", "a", "f[s]", "none"]);
        g.line(1, &format!("resume: f[s] = max(f[s], {from})"));
    }
    g.line(1, "loop {");
    let take = g.one(&[
        "take: f[s] = q.receive()",
        "wait tm",
        "wait f[s] == none",
        "arm tm",
        "q.send(f[s])",
    ]);
    g.line(2, take);
    let store = g.one(&[
        "store: d = max(d, f[s])",
        "f[s] = max(f[s], v)",
        "f[s] = none",
        "c = 1",
    ]);
    g.line(2, store);
    g.line(1, "}");
    g.line(0, "}");
}

/// The text of the file `choices` draw.
pub fn file(choices: Vec<u32>) -> String {
    let mut g = Gen {
        choices,
        at: 0,
        labels: 0,
        blocks: vec![],
        has_procedure: false,
        concurrent: false,
        has_message: false,
        processes: vec![],
        atomic: false,
        family: false,
        sql: false,
        by_change: false,
        interleave: false,
        rows: 1,
        reading: false,
        in_procedure: false,
        standby: false,
        drops: false,
        out: String::new(),
    };
    g.line(0, "walcheck 1");
    g.line(0, "connector \"generated\"");
    let knobs: [(&str, &[&str]); 13] = [
        ("transactions", &["0", "1", "2", "1"]),
        ("connector_crashes", &["0", "1"]),
        ("pg_crashes", &["0", "1", "1"]),
        ("os_crashes", &["0", "0", "1"]),
        ("pg_version", &["15", "15.12", "15.12", "15.18", "17", "18"]),
        ("pg_stops", &["0", "1"]),
        ("max_slot_wal_keep_pages", &["0", "0", "1", "2"]),
        ("runs", &["1", "2", "3", "unbounded"]),
        ("kills", &["0", "1"]),
        ("call_failures", &["0", "1", "1"]),
        ("keepalives", &["0", "0", "1"]),
        ("commit", &["sync", "async", "either"]),
        ("checkpoints", &["on", "off"]),
    ];
    let mut version = "15";
    // Messages one by one need a transaction to send.
    g.by_change = g.pick(3) == 0;
    // Transactions that interleave need two: one open while the other commits; a third run
    // makes their files too large.
    g.interleave = g.pick(4) == 0;
    // A standby in a fifth of the files: logical decoding there needs PostgreSQL 16.
    g.standby = g.pick(5) == 0;
    for (knob, values) in knobs {
        let v = match knob {
            "pg_version" if g.standby => g.one(&["16", "17", "18"]),
            // What a standby's crash must leave alone: the primary's unflushed commits.
            "commit" if g.standby => g.one(&["async", "either", "either", "sync"]),
            "transactions" if g.interleave => "2",
            "runs" if g.interleave => g.one(&["1", "2", "unbounded"]),
            "transactions" if g.by_change => g.one(&["1", "2", "1"]),
            _ => g.one(values),
        };
        g.line(0, &format!("env {knob} = {v}"));
        if knob == "pg_version" {
            version = v;
        }
    }
    if g.interleave {
        g.line(0, "env interleave = on");
    }
    if g.standby {
        // "`failovers` … (`server = primary`)": the failover knobs are the primary's.
        g.line(0, "env server = standby");
    } else {
        failover_knobs(&mut g, version);
    }
    drop_knobs(&mut g);
    g.line(
        0,
        "skip eventually-acknowledged \"liveness is not compared\"",
    );
    g.line(0, "skip wal-retention-bounded \"liveness is not compared\"");
    for (_, decl) in VARS {
        g.line(0, decl);
    }
    g.sql = g.pick(4) == 0;
    if g.sql {
        g.line(0, "volatile r: txns = none");
    }
    message_knobs(&mut g);
    // Processes too: a fifth of the files reading messages one by one or interleaving.
    g.concurrent = g.pick(if g.by_change || g.interleave { 5 } else { 3 }) == 0;
    if g.concurrent {
        g.line(0, "timer tm");
        let capacity = 1 + g.pick(2);
        g.line(0, &format!("channel q: lsn, capacity {capacity}"));
        g.processes = (1..=1 + g.pick(2)).map(|i| format!("w{i}")).collect();
        g.family = g.pick(3) == 0;
        if g.family {
            g.line(0, "volatile f[1..2]: lsn = none");
            g.processes.push("fam[1]".to_owned());
        }
    }
    g.has_procedure = g.pick(3) == 0;
    if g.has_procedure {
        g.in_procedure = true;
        g.procedure("procedure p", false);
        g.in_procedure = false;
    }
    if g.pick(3) == 0 {
        g.procedure("first run", g.has_procedure);
    }
    if g.pick(3) == 0 {
        g.procedure("after crash", g.has_procedure);
    }
    g.procedure("every run", g.has_procedure);
    for name in g.processes.clone() {
        if name.starts_with("fam") {
            family(&mut g);
        } else {
            g.process(&name, g.has_procedure);
        }
    }
    for i in 0..g.pick(3) {
        let c = g.cond(true);
        let when = match g.pick(3) {
            0 => format!(" when {}", g.cond(true)),
            _ => String::new(),
        };
        g.line(0, &format!("always inv{i}: {c}{when}"));
    }
    for i in 0..g.pick(3) {
        let c = g.cond(true);
        g.line(0, &format!("sometimes wit{i}: {c}"));
    }
    properties_of_the_new_kinds(&mut g);
    // The WAL removal horizon: the built-in that keeps it, or a property of the file's.
    match g.pick(4) {
        0 => g.line(0, "expect no-needed-wal-removed holds"),
        1 => g.line(0, "always hz: slot.saved_restart_lsn >= wal.removed_before"),
        _ => {}
    }
    g.out
}

/// `failovers` in about half the files, 2 now and then, on the primary it needs (named or by
/// default); `failover_slots`, mostly on, in those on PostgreSQL 17 or later, the release it
/// needs.
fn failover_knobs(g: &mut Gen, version: &str) {
    // A standby makes a file reading messages one by one or interleaving large: only a third of
    // those have one.
    if (g.by_change || g.interleave) && g.pick(3) != 0 {
        return;
    }
    let failovers = g.one(&["0", "1", "0", "1", "2"]);
    if failovers != "0" || g.pick(2) == 0 {
        g.line(0, &format!("env failovers = {failovers}"));
        if failovers != "0" && g.pick(2) == 0 {
            g.line(0, "env server = primary");
        }
    }
    if ["17", "18"].contains(&version) {
        let slots = g.one(&["off", "on", "on"]);
        g.line(0, &format!("env failover_slots = {slots}"));
    }
}

/// `stream_drops` in about a fifth of the files, 1 and now and then 2: a quarter of the
/// others, and a sixth of those that read messages one by one or interleave, whose state spaces
/// are large already.
fn drop_knobs(g: &mut Gen) {
    let share = if g.by_change || g.interleave { 6 } else { 4 };
    if g.pick(share) != 0 {
        return;
    }
    let drops = g.one(&["1", "1", "2"]);
    g.line(0, &format!("env stream_drops = {drops}"));
    g.drops = true;
}

/// `env messages = changes` in a third of the files, with 1 to 3 `rows` and `multi_insert` on or
/// off; several `rows` now and then in a file that decodes by SQL.
fn message_knobs(g: &mut Gen) {
    let rows = if g.by_change {
        g.line(0, "env messages = changes");
        let multi = g.one(&["off", "on"]);
        g.line(0, &format!("env multi_insert = {multi}"));
        g.one(&["1", "2", "2", "3"])
    } else if g.sql && g.pick(2) == 0 {
        g.one(&["2", "3"])
    } else {
        return;
    };
    g.rows = rows.parse().expect("a number");
    g.line(0, &format!("env rows = {rows}"));
}

/// `eventually` and `leads to` properties, and one reading the message name, now and then.
fn properties_of_the_new_kinds(g: &mut Gen) {
    if g.has_message && g.pick(3) == 0 {
        let mut of = vec![
            "m.wal_end <= wal.flush",
            "m.txn == none or m.txn.end_lsn <= slot.confirmed_flush",
            "not m.is_keepalive",
            "m.txn.end_lsn >= d",
        ];
        if g.by_change {
            of.extend([
                "not m.is_change or m.lsn < m.txn.end_lsn",
                "not m.is_begin or m.lsn == m.txn.first_lsn",
                "m.index <= 1",
                "m.is_commit or m.lsn <= dd",
            ]);
        }
        let c = g.one(&of);
        g.line(0, &format!("always msg: {c}"));
    }
    // What processes, timers and channels make hold or not: a timer fired, a channel drained,
    // a process past its steps.
    let live = |g: &mut Gen| match g.concurrent && g.pick(3) != 0 {
        true => g
            .one(&[
                "not tm",
                "q == 0",
                "tm",
                "q > 0",
                "not in w1",
                "b",
                "t == 1",
            ])
            .to_owned(),
        false => g.cond(true),
    };
    if g.pick(4) == 0 {
        let c = live(g);
        g.line(0, &format!("eventually ev: {c}"));
    }
    if g.pick(4) == 0 {
        let p = live(g);
        let q = live(g);
        g.line(0, &format!("always lt: {p} leads to {q}"));
    }
}
