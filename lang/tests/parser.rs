//! The parser's tree for small texts: literals, precedence, nesting, labels, storage, spans.

use walcheck_lang::ast::*;

fn parse(source: &str) -> File {
    match walcheck_lang::parse(source) {
        Ok(f) => f,
        Err(d) => panic!("{}", d.render("test.wal", source)),
    }
}

/// The statements of the file's first procedure.
fn body(source: &str) -> Vec<Stmt> {
    parse(source)
        .procedures()
        .next()
        .unwrap()
        .body
        .stmts
        .clone()
}

fn property(source: &str) -> Expr {
    let file = parse(source);
    let inv = file.invariants().next().unwrap();
    inv.cond.clone()
}

#[test]
fn lsns_read_as_postgresql_prints_them_in_bytes() {
    let e = property("walcheck 1\nalways p: slot.confirmed_flush >= 16/B374D848\n");
    let ExprKind::Binary(BinOp::Ge, _, rhs) = e.node else {
        panic!("{e:?}")
    };
    assert_eq!(rhs.node, ExprKind::Lsn(0x16_B374_D848));
    let e = property("walcheck 1\nalways p: wal.flush != 0/0\n");
    let ExprKind::Binary(BinOp::Ne, _, rhs) = e.node else {
        panic!("{e:?}")
    };
    assert_eq!(rhs.node, ExprKind::Lsn(0));
}

#[test]
fn or_binds_loosest_then_and_then_not_then_comparisons() {
    let e = property("walcheck 1\nalways p: not a == b and c or d\n");
    let ExprKind::Binary(BinOp::Or, lhs, _) = e.node else {
        panic!("{e:?}")
    };
    let ExprKind::Binary(BinOp::And, not, _) = lhs.node else {
        panic!("{lhs:?}")
    };
    let ExprKind::Not(cmp) = not.node else {
        panic!("{not:?}")
    };
    assert!(matches!(cmp.node, ExprKind::Binary(BinOp::Eq, ..)));
}

#[test]
fn else_if_nests_an_if_in_the_else_block() {
    let src = "walcheck 1\nevery run {\n  if a {\n    fail \"a\"\n  } else if b {\n    fail \"b\"\n  } else {\n    fail fatal \"c\"\n  }\n}\n";
    let stmts = body(src);
    let StmtKind::If {
        otherwise: Some(other),
        ..
    } = &stmts[0].kind
    else {
        panic!()
    };
    let StmtKind::If {
        otherwise: Some(last),
        ..
    } = &other.stmts[0].kind
    else {
        panic!()
    };
    assert!(matches!(
        last.stmts[0].kind,
        StmtKind::Fail { fatal: true, .. }
    ));
}

#[test]
fn labels_unfair_marks_and_atomic_blocks() {
    let src = "walcheck 1\nevery run {\n  unfair tick: flush offset\n  read: {\n    c = pg_replication_slots().confirmed_flush_lsn\n    w0 = pg_current_wal_lsn()\n  }\n}\n";
    let stmts = body(src);
    assert!(stmts[0].unfair);
    assert_eq!(stmts[0].label.as_ref().unwrap().node, "tick");
    assert_eq!(stmts[0].span.text(src), "unfair tick: flush offset");
    let StmtKind::Atomic(block) = &stmts[1].kind else {
        panic!()
    };
    assert_eq!(block.stmts.len(), 2);
    let StmtKind::AssignCall { call, .. } = &block.stmts[0].kind else {
        panic!()
    };
    assert_eq!(call.field.as_ref().unwrap().node, "confirmed_flush_lsn");
}

#[test]
fn calls_take_named_arguments_even_with_keyword_names() {
    let src = "walcheck 1\nevery run {\n  standby_status_update(write = pos, flush = pos)\n  destination.commit(dest_lsn = pos)\n}\n";
    let stmts = body(src);
    let StmtKind::Call(call) = &stmts[0].kind else {
        panic!()
    };
    let names: Vec<_> = call
        .args
        .iter()
        .map(|a| a.name.as_ref().unwrap().node.as_str())
        .collect();
    assert_eq!(names, ["write", "flush"]);
    let StmtKind::Call(commit) = &stmts[1].kind else {
        panic!()
    };
    assert_eq!(commit.callee.node, "destination.commit");
}

#[test]
fn variables_say_where_they_live() {
    let src = "walcheck 1\ndurable a: lsn = none\ndurable b: lsn = none, async\ndurable c: lsn = none, in destination\nvolatile d: 0..3 = 0\n";
    let file = parse(src);
    let storage: Vec<_> = file.vars().map(|v| (v.storage, v.ty.node)).collect();
    assert_eq!(
        storage,
        [
            (Storage::Durable, Type::Lsn),
            (Storage::DurableAsync, Type::Lsn),
            (Storage::Destination, Type::Lsn),
            (Storage::Volatile, Type::Counter(0, 3)),
        ]
    );
}

#[test]
fn loops_keep_their_bounds_and_conditions() {
    let src = "walcheck 1\nevery run {\n  retry 300 times {\n    e = pg_replication_slot_advance(w0).end_lsn\n  } until e >= w0\n  for each message m until pos >= w0 {\n    pos = m.wal_end\n  }\n}\n";
    let stmts = body(src);
    let StmtKind::Retry { times, .. } = &stmts[0].kind else {
        panic!()
    };
    assert_eq!(times.node, 300);
    let StmtKind::ForEach { message, until, .. } = &stmts[1].kind else {
        panic!()
    };
    assert_eq!(message.node, "m");
    assert_eq!(until.as_ref().unwrap().span.text(src), "pos >= w0");
}

#[test]
fn crlf_tabs_and_a_missing_last_newline_are_fine() {
    let src = "walcheck 1\r\n\r\nevery run {\r\n\tstart_replication(0/0)\r\n}";
    assert_eq!(body(src).len(), 1);
}

#[test]
fn knobs_keep_numbers_and_words() {
    let file = parse("walcheck 1\nenv transactions = 3\nenv server = standby\n");
    let values: Vec<_> = file.knobs().map(|k| k.value.node.to_string()).collect();
    assert_eq!(values, ["3", "standby"]);
}

#[test]
fn spans_give_lines() {
    let src = "walcheck 1\n\nevery run {\n  start_replication(0/0)\n}\n";
    assert_eq!(body(src)[0].span.line(src), 4);
}
