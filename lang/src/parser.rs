//! The grammar of a connector file (docs/language.md), written with winnow: one function per
//! rule, each token followed by the blanks and `# comments` after it. Newlines end statements
//! and top-level items. The first error stops the parse and becomes a [`Diagnostic`].

use winnow::combinator::{alt, cut_err, delimited, eof, opt, peek, preceded, repeat, separated};
use winnow::error::{AddContext, ContextError, ErrMode, StrContext, StrContextValue};
use winnow::prelude::*;
use winnow::stream::{Location, Stateful, Stream};
use winnow::token::{any, literal, one_of, take_till, take_while};
use winnow::LocatingSlice;

use std::cell::Cell;

use crate::ast::*;
use crate::diagnostic::{Code, Diagnostic};

/// The input: the text, where it is, and the end of the last token read (for spans that stop at
/// a statement's last token, not at the comment after it).
type In<'s> = Stateful<LocatingSlice<&'s str>, &'s State>;

/// What the parse keeps beside the input.
#[derive(Debug, Default)]
struct State {
    /// The end of the last token read (bytes).
    last_end: Cell<usize>,
    /// How deep blocks and expressions nest here.
    depth: Cell<usize>,
    /// The family range the declaration being read gave after its name, if any.
    range: std::cell::RefCell<Option<Range>>,
}

/// A family's `[LO..HI]` or `[P in LO..HI]`, and its span.
type Range = (Option<Name>, u64, u64, Span);

/// The deepest nesting of blocks (an `else if` nests one level deeper), parentheses, `not`s
/// and operators a file may have, each operator of a chain (`a and b and c`, `t + 1 + 1`,
/// `m.txn.end_lsn`) one level deeper than the one before: deeper text is an error, not a stack
/// overflow where the tree is read.
pub const NESTING_MAX: usize = 64;

/// The most values a channel holds: each is a variable of every state (a larger capacity is
/// `limits`' error, and makes this many places).
pub const CHANNEL_CAPACITY_MAX: u64 = 8;
type PResult<T> = ModalResult<T, ContextError>;

/// The words the grammar reserves: never a variable, label or procedure name.
pub const KEYWORDS: &[&str] = &[
    "after",
    "always",
    "and",
    "arm",
    "at",
    "cancel",
    "channel",
    "connector",
    "crash",
    "durable",
    "each",
    "either",
    "else",
    "env",
    "eventually",
    "every",
    "expect",
    "fail",
    "false",
    "fatal",
    "first",
    "flush",
    "for",
    "holds",
    "if",
    "in",
    "killable",
    "loop",
    "max",
    "message",
    "min",
    "none",
    "not",
    "or",
    "procedure",
    "process",
    "retry",
    "run",
    "skip",
    "sometimes",
    "timer",
    "times",
    "true",
    "unfair",
    "until",
    "violated",
    "volatile",
    "wait",
    "walcheck",
    "when",
    "while",
];

/// Parses a whole file, or returns the first syntax error.
pub fn parse_file(source: &str) -> Result<File, Diagnostic> {
    if let Some(missing) = missing_version(source) {
        return Err(missing);
    }
    let state = State::default();
    let mut input = Stateful {
        input: LocatingSlice::new(source),
        state: &state,
    };
    match file.parse_next(&mut input) {
        Ok(f) => Ok(f),
        Err(e) => Err(syntax_error(source, input.current_token_start(), e)),
    }
}

/// `E02` when the first word of the file (past blanks and comments) is not `walcheck`.
fn missing_version(source: &str) -> Option<Diagnostic> {
    let mut offset = 0;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            offset += line.len();
            continue;
        }
        let start = offset + (line.len() - trimmed.len());
        let word = trimmed
            .split(|c: char| !is_name_char(c))
            .next()
            .unwrap_or("");
        if word == "walcheck" {
            return None;
        }
        let end = start + trimmed.trim_end().len();
        return Some(version_missing(Span::new(start, end)));
    }
    Some(version_missing(Span::new(0, source.len())))
}

fn version_missing(span: Span) -> Diagnostic {
    Diagnostic::new(
        Code::MissingVersion,
        span,
        "missing version line",
        "the file must start with its version line",
    )
    .hint("write `walcheck 1` as the file's first line")
}

/// The diagnostic for the parse error `e` at `offset`: what was expected, and the text found.
fn syntax_error(source: &str, offset: usize, e: ErrMode<ContextError>) -> Diagnostic {
    let e = e.into_inner().unwrap_or_default();
    // The innermost expectation: the most precise (`times`, not `a statement`).
    let expected = e.context().find_map(|c| match c {
        StrContext::Expected(v) => Some(v.to_string()),
        _ => None,
    });
    let within = e.context().find_map(|c| match c {
        StrContext::Label(l) => Some(*l),
        _ => None,
    });
    let found = found_at(source, offset);
    let span = Span::new(offset, offset + found.len());
    let what = match expected {
        None => "unexpected text".to_string(),
        Some(one) => format!("expected {one}"),
    };
    let message = match within {
        Some(rule) => format!("syntax error in {rule}: {what}"),
        None => format!("syntax error: {what}"),
    };
    let label = if found.is_empty() {
        "here".to_string()
    } else if KEYWORDS.contains(&found) {
        format!("found `{found}`, a reserved word: it names no label, variable or procedure")
    } else {
        format!("found `{found}`")
    };
    let d = Diagnostic::new(Code::Syntax, span, message, label);
    match within {
        Some(rule) => d.hint(format!("see the grammar of {rule} in docs/language.md")),
        None => d,
    }
}

/// The word or symbol at `offset`, for "found `…`" (empty at a line's or the file's end).
fn found_at(source: &str, offset: usize) -> &str {
    let rest = source.get(offset..).unwrap_or("");
    let first = rest.chars().next();
    let len = match first {
        None | Some('\n') | Some('\r') => 0,
        Some(c) if is_name_char(c) => rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len()),
        Some(c) => c.len_utf8(),
    };
    &rest[..len]
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

// ---- trivia and tokens ------------------------------------------------------------------------

/// Blanks and a `# comment` up to (not including) the end of the line.
fn ws(i: &mut In<'_>) -> PResult<()> {
    take_while(0.., [' ', '\t']).void().parse_next(i)?;
    opt(('#', take_till(0.., ['\n']))).void().parse_next(i)
}

/// One or more line ends, with the blank and comment lines after them.
fn nl(i: &mut In<'_>) -> PResult<()> {
    repeat(1.., (opt('\r'), '\n', ws))
        .map(|()| ())
        .parse_next(i)
}

/// Any blank and comment lines.
fn blank_lines(i: &mut In<'_>) -> PResult<()> {
    ws(i)?;
    opt(nl).void().parse_next(i)
}

/// The end of a line-oriented item: a line end, or the end of the file.
fn end_of_line(i: &mut In<'_>) -> PResult<()> {
    alt((nl, eof.void()))
        .context(expected("the end of the line"))
        .parse_next(i)
}

fn expected(what: &'static str) -> StrContext {
    StrContext::Expected(StrContextValue::Description(what))
}

/// `p` where the grammar allows nothing else: its failure is the error, saying `what` was
/// expected.
fn must<'s, O>(
    p: impl Parser<In<'s>, O, ErrMode<ContextError>>,
    what: &'static str,
) -> impl Parser<In<'s>, O, ErrMode<ContextError>> {
    cut_err(p.context(expected(what)))
}

/// `p`, then the blanks after it; the span of `p`'s text only.
fn lexeme<'s, O>(
    mut p: impl Parser<In<'s>, O, ErrMode<ContextError>>,
) -> impl Parser<In<'s>, Spanned<O>, ErrMode<ContextError>> {
    move |i: &mut In<'s>| {
        let (node, range) = p.by_ref().with_span().parse_next(i)?;
        i.state.last_end.set(range.end);
        ws(i)?;
        Ok(Spanned {
            node,
            span: Span::new(range.start, range.end),
        })
    }
}

/// The keyword `word` (not the start of a longer name); its span.
fn kw<'s>(word: &'static str) -> impl Parser<In<'s>, Span, ErrMode<ContextError>> {
    let bare = (literal(word), winnow::combinator::not(one_of(is_name_char)));
    lexeme(bare.void()).map(|s| s.span)
}

/// The symbol `s`; its span.
fn sym<'s>(s: &'static str) -> impl Parser<In<'s>, Span, ErrMode<ContextError>> {
    lexeme(literal(s).void()).map(|t| t.span)
}

/// A name: a letter or `_`, then letters, digits and `_`; not a keyword.
fn name(i: &mut In<'_>) -> PResult<Name> {
    let word = (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., is_name_char),
    );
    lexeme(
        word.take()
            .verify(|w: &str| !KEYWORDS.contains(&w))
            .map(str::to_string),
    )
    .parse_next(i)
}

/// A word where keywords are names too: a parameter before `=` (`flush = …`), a field after
/// `.` (`wal.flush`).
fn any_word(i: &mut In<'_>) -> PResult<Name> {
    let word = (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., is_name_char),
    );
    lexeme(word.take().map(str::to_string)).parse_next(i)
}

/// A property id: lower-case words joined by `-` (`no-data-loss`).
fn property_id(i: &mut In<'_>) -> PResult<Name> {
    let word = (
        one_of('a'..='z'),
        take_while(0.., |c: char| {
            c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'
        }),
    );
    lexeme(word.take().map(str::to_string))
        .context(expected("a property id like `no-data-loss`"))
        .parse_next(i)
}

/// A string in double quotes on one line; `\"` and `\\` escape.
fn string(i: &mut In<'_>) -> PResult<Spanned<String>> {
    let char_ = alt((
        preceded('\\', one_of(['"', '\\'])),
        any.verify(|c: &char| !matches!(c, '"' | '\\' | '\n')),
    ));
    let body = repeat(0.., char_).fold(String::new, |mut s, c| {
        s.push(c);
        s
    });
    lexeme(delimited(
        '"',
        body,
        cut_err('"').context(expected("`\"` before the line ends")),
    ))
    .context(expected("a string in double quotes"))
    .parse_next(i)
}

/// A decimal number; one past `u64` reads as `u64::MAX`, so that its use's own range check
/// (`retry` at most 1000 times, an `env` knob's range) names the limit.
fn number(i: &mut In<'_>) -> PResult<Spanned<u64>> {
    lexeme(
        take_while(1.., |c: char| c.is_ascii_digit())
            .map(|digits: &str| digits.parse::<u64>().unwrap_or(u64::MAX)),
    )
    .context(expected("a number"))
    .parse_next(i)
}

/// A counter's value or bound: a decimal number of 64 bits at most, an error past it (a counter
/// holds `0..=18446744073709551615`).
fn counter_number(i: &mut In<'_>) -> PResult<Spanned<u64>> {
    let digits = peek(take_while(1.., |c: char| c.is_ascii_digit())).parse_next(i)?;
    if digits.parse::<u64>().is_err() {
        let what = expected("a number of 64 bits at most (18446744073709551615)");
        let e = ContextError::new().add_context(i, &i.checkpoint(), what);
        return Err(ErrMode::Cut(e));
    }
    number(i)
}

/// An LSN as PostgreSQL prints it: `X/Y`, two hexadecimal numbers of 32 bits, in bytes.
fn lsn(i: &mut In<'_>) -> PResult<Spanned<u64>> {
    let hex = || take_while(1..=8, |c: char| c.is_ascii_hexdigit());
    let parts = (
        hex(),
        '/',
        hex(),
        winnow::combinator::not(one_of(is_name_char)),
    );
    lexeme(parts.map(|(hi, _, lo, ())| {
        let value = |h: &str| u64::from_str_radix(h, 16).unwrap_or(0);
        (value(hi) << 32) | value(lo)
    }))
    .parse_next(i)
}

// ---- the file ---------------------------------------------------------------------------------

fn file(i: &mut In<'_>) -> PResult<File> {
    blank_lines(i)?;
    let version = version_line(i)?;
    let description = opt(connector_line).parse_next(i)?;
    let items: Vec<Item> = repeat(0.., item).parse_next(i)?;
    eof.context(expected(
        "a top-level declaration (env, durable, volatile, every run, procedure, expect, always, …)",
    ))
    .parse_next(i)?;
    Ok(File {
        version,
        description,
        items,
    })
}

fn version_line(i: &mut In<'_>) -> PResult<Spanned<u32>> {
    kw("walcheck").parse_next(i)?;
    let n = cut_err(number)
        .context(StrContext::Label("the version line"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    let node = u32::try_from(n.node).unwrap_or(u32::MAX);
    Ok(Spanned { node, span: n.span })
}

fn connector_line(i: &mut In<'_>) -> PResult<Spanned<String>> {
    kw("connector").parse_next(i)?;
    let s = cut_err(string)
        .context(StrContext::Label("the connector line"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    Ok(s)
}

fn item(i: &mut In<'_>) -> PResult<Item> {
    i.state.range.borrow_mut().take();
    let item = alt((
        knob.map(Item::Knob),
        var_decl.map(Item::Var),
        procedure.map(Item::Procedure),
        expect_line.map(Item::Expect),
        skip_line.map(Item::Skip),
        invariant.map(Item::Invariant),
        timer_decl.map(Item::Timer),
        channel_decl.map(Item::Channel),
    ))
    .parse_next(i)?;
    let range = i.state.range.borrow_mut().take();
    Ok(match range {
        Some((param, lo, hi, span)) => Item::Family(Family {
            param,
            lo,
            hi,
            span,
            item: Box::new(item),
        }),
        None => item,
    })
}

/// `[LO..HI]` after a declaration's name (`[P in LO..HI]` for a process): kept in the parse's
/// state for [`item`] to wrap the declaration in a family.
fn family_range(i: &mut In<'_>, process: bool) -> PResult<()> {
    let Some(open) = opt(sym("[")).parse_next(i)? else {
        return Ok(());
    };
    let rest = |i: &mut In<'_>| {
        let param = if process {
            let p = must(name, "the index's name: `[s in 1..2]`").parse_next(i)?;
            must(kw("in"), "`in` and the range").parse_next(i)?;
            Some(p)
        } else {
            None
        };
        let lo = must(number, "the range's first index").parse_next(i)?;
        must(sym(".."), "`..` and the last index").parse_next(i)?;
        let hi = must(number, "the range's last index").parse_next(i)?;
        let close = must(sym("]"), "`]`").parse_next(i)?;
        Ok((param, lo.node, hi.node, Span::new(open.start, close.end)))
    };
    let range = cut_err(rest)
        .context(StrContext::Label("a family's range"))
        .parse_next(i)?;
    i.state.range.replace(Some(range));
    Ok(())
}

/// A name, and an index after it (`flushed[s]`, `flushed[2]`: a family's member), as one name.
fn indexed_name(i: &mut In<'_>) -> PResult<Name> {
    let n = name(i)?;
    let index = opt(delimited(
        sym("["),
        cut_err(alt((
            number.map(|k| k.node.to_string()),
            name.map(|p| p.node),
        )))
        .context(expected("a member's number or the family's index")),
        cut_err(sym("]")).context(expected("`]`")),
    ))
    .with_span()
    .parse_next(i)?;
    Ok(match index {
        (Some(k), span) => Spanned {
            node: format!("{}[{k}]", n.node),
            span: Span::new(n.span.start, span.end),
        },
        (None, _) => n,
    })
}

fn knob(i: &mut In<'_>) -> PResult<Knob> {
    let start = kw("env").parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let name = must(name, "the knob's name").parse_next(i)?;
        must(sym("="), "`=` and the knob's value").parse_next(i)?;
        let digits = || take_while(1.., |c: char| c.is_ascii_digit());
        let value = alt((
            // A release, `15.12`: a word the knob's check reads.
            lexeme(
                (digits(), '.', digits())
                    .take()
                    .map(|w: &str| KnobValue::Word(w.to_string())),
            ),
            number.map(|n| Spanned {
                node: KnobValue::Number(n.node),
                span: n.span,
            }),
            lexeme(take_while(1.., is_name_char).map(|w: &str| KnobValue::Word(w.to_string()))),
        ))
        .context(expected("a number or a word"))
        .parse_next(i)?;
        Ok((name, value))
    };
    let (name, value) = cut_err(rest)
        .context(StrContext::Label("an env line"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    Ok(Knob {
        span: Span::new(start.start, value.span.end),
        name,
        value,
    })
}

fn var_decl(i: &mut In<'_>) -> PResult<VarDecl> {
    let (durable, start) = alt((
        kw("durable").map(|s| (true, s)),
        kw("volatile").map(|s| (false, s)),
    ))
    .parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let name = must(name, "the variable's name").parse_next(i)?;
        family_range(i, false)?;
        must(sym(":"), "`:` and the variable's type").parse_next(i)?;
        let ty = ty(i)?;
        must(sym("="), "`=` and the initial value").parse_next(i)?;
        let init = expr(i)?;
        let storage = match durable {
            false => Storage::Volatile,
            true => opt(preceded(sym(","), durable_kind))
                .parse_next(i)?
                .unwrap_or(Storage::Durable),
        };
        Ok((name, ty, init, storage))
    };
    let (name, ty, init, storage) = cut_err(rest)
        .context(StrContext::Label("a variable declaration"))
        .parse_next(i)?;
    let end = last_end(i);
    cut_err(end_of_line).parse_next(i)?;
    Ok(VarDecl {
        storage,
        span: Span::new(start.start, end.max(init.span.end)),
        name,
        ty,
        init,
    })
}

fn timer_decl(i: &mut In<'_>) -> PResult<TimerDecl> {
    let start = kw("timer").parse_next(i)?;
    let name = cut_err(name)
        .context(StrContext::Label("a timer declaration"))
        .context(expected("the timer's name"))
        .parse_next(i)?;
    family_range(i, false)?;
    cut_err(end_of_line).parse_next(i)?;
    let span = Span::new(start.start, name.span.end);
    let var = VarDecl {
        storage: Storage::Volatile,
        name: name.clone(),
        ty: Spanned {
            node: Type::Bool,
            span: name.span,
        },
        init: Spanned {
            node: ExprKind::Bool(false),
            span: name.span,
        },
        span,
    };
    Ok(TimerDecl { span, name, var })
}

fn channel_decl(i: &mut In<'_>) -> PResult<ChannelDecl> {
    let start = kw("channel").parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let name = must(name, "the channel's name").parse_next(i)?;
        family_range(i, false)?;
        must(sym(":"), "`:` and the type of what the channel carries").parse_next(i)?;
        let ty = ty(i)?;
        must(sym(","), "`, capacity N`").parse_next(i)?;
        must(kw("capacity"), "`capacity N`").parse_next(i)?;
        let capacity = must(number, "the channel's capacity").parse_next(i)?;
        Ok((name, ty, capacity))
    };
    let (name, ty, capacity) = cut_err(rest)
        .context(StrContext::Label("a channel declaration"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    let span = Span::new(start.start, capacity.span.end);
    let vars = channel_vars(&name, &ty, &capacity, span);
    Ok(ChannelDecl {
        span,
        name,
        ty,
        capacity,
        vars,
    })
}

/// A channel's variables: how many values it holds, then one a place (no more than
/// [`crate::limits::CHANNEL_CAPACITY_MAX`]: a larger capacity is the checks' error).
pub(crate) fn channel_vars(
    name: &Name,
    ty: &Spanned<Type>,
    capacity: &Spanned<u64>,
    span: Span,
) -> Vec<VarDecl> {
    let places = capacity.node.min(CHANNEL_CAPACITY_MAX);
    let at = |node: ExprKind| Spanned {
        node,
        span: name.span,
    };
    let length = VarDecl {
        storage: Storage::Volatile,
        name: name.clone(),
        ty: Spanned {
            node: Type::Counter(0, places),
            span: capacity.span,
        },
        init: at(ExprKind::Number(0)),
        span,
    };
    let empty = match ty.node {
        Type::Bool => ExprKind::Bool(false),
        Type::Counter(lo, _) => ExprKind::Number(lo),
        _ => ExprKind::None,
    };
    let place = |k: u64| VarDecl {
        storage: Storage::Volatile,
        name: Spanned {
            node: format!("{}[{k}]", name.node),
            span: name.span,
        },
        ty: ty.clone(),
        init: at(empty.clone()),
        span,
    };
    std::iter::once(length)
        .chain((1..=places).map(place))
        .collect()
}

fn durable_kind(i: &mut In<'_>) -> PResult<Storage> {
    alt((
        kw("async").value(Storage::DurableAsync),
        (kw("in"), kw("destination")).value(Storage::Destination),
    ))
    .context(expected("`async` or `in destination`"))
    .parse_next(i)
}

fn ty(i: &mut In<'_>) -> PResult<Spanned<Type>> {
    let counter = (counter_number, sym(".."), counter_number).map(|(lo, _, hi)| Spanned {
        node: Type::Counter(lo.node, hi.node),
        span: Span::new(lo.span.start, hi.span.end),
    });
    let named = lexeme(alt((
        literal("lsn").value(Type::Lsn),
        literal("bool").value(Type::Bool),
        literal("txns").value(Type::Txns),
        literal("txn").value(Type::Txn),
    )));
    alt((counter, named))
        .context(expected("a type: lsn, bool, txn or a range like 0..3"))
        .parse_next(i)
}

fn procedure(i: &mut In<'_>) -> PResult<Procedure> {
    let head = alt((
        (kw("every"), cut_err(kw("run")))
            .map(|(a, b)| (ProcKind::EveryRun, Span::new(a.start, b.end), false)),
        (kw("first"), cut_err(kw("run")))
            .map(|(a, b)| (ProcKind::FirstRun, Span::new(a.start, b.end), false)),
        (kw("after"), cut_err(kw("crash")))
            .map(|(a, b)| (ProcKind::AfterCrash, Span::new(a.start, b.end), false)),
        (kw("procedure"), must(name, "the procedure's name")).map(|(a, n)| {
            let span = Span::new(a.start, n.span.end);
            (ProcKind::Named(n), span, false)
        }),
        (
            opt(kw("killable")),
            kw("process"),
            must(name, "the process's name"),
        )
            .map(|(k, a, n)| {
                let span = Span::new(k.unwrap_or(a).start, n.span.end);
                (ProcKind::Process(n), span, k.is_some())
            }),
    ))
    .parse_next(i)?;
    if matches!(head.0, ProcKind::Process(_)) {
        family_range(i, true)?;
    }
    let body = cut_err(block)
        .context(StrContext::Label("a procedure"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    let (kind, head, killable) = head;
    Ok(Procedure {
        kind,
        span: Span::new(head.start, body.span.end),
        head,
        body,
        killable,
    })
}

fn expect_line(i: &mut In<'_>) -> PResult<Expect> {
    let start = kw("expect").parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let property = property_id(i)?;
        let violated = alt((kw("holds").value(false), kw("violated").value(true)))
            .context(expected("`holds` or `violated`"))
            .parse_next(i)?;
        let why = opt(string).parse_next(i)?;
        Ok((property, violated, why))
    };
    let (property, violated, why) = cut_err(rest)
        .context(StrContext::Label("an expect line"))
        .parse_next(i)?;
    let end = last_end(i);
    cut_err(end_of_line).parse_next(i)?;
    Ok(Expect {
        property,
        violated,
        why,
        span: Span::new(start.start, end),
    })
}

fn skip_line(i: &mut In<'_>) -> PResult<Skip> {
    let start = kw("skip").parse_next(i)?;
    let (property, why) = cut_err((property_id, string))
        .context(StrContext::Label("a skip line"))
        .parse_next(i)?;
    cut_err(end_of_line).parse_next(i)?;
    Ok(Skip {
        span: Span::new(start.start, why.span.end),
        property,
        why,
    })
}

fn invariant(i: &mut In<'_>) -> PResult<Invariant> {
    let (kind, start) = alt((
        kw("always").map(|s| (Prop::Always, s)),
        kw("sometimes").map(|s| (Prop::Sometimes, s)),
        kw("eventually").map(|s| (Prop::Eventually, s)),
    ))
    .parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let id = property_id(i)?;
        must(sym(":"), "`:` and the property's condition").parse_next(i)?;
        let cond = expr(i)?;
        let (when, leads_to) = match kind {
            Prop::Always => {
                let leads =
                    opt(preceded((kw("leads"), must(kw("to"), "`to`")), expr)).parse_next(i)?;
                let when = match leads {
                    Some(_) => None,
                    None => opt(preceded(kw("when"), expr)).parse_next(i)?,
                };
                (when, leads)
            }
            _ => (None, None),
        };
        Ok((id, cond, when, leads_to))
    };
    let (id, cond, when, leads_to) = cut_err(rest)
        .context(StrContext::Label("a property"))
        .parse_next(i)?;
    let end = [&when, &leads_to]
        .into_iter()
        .flatten()
        .map(|e| e.span.end)
        .fold(cond.span.end, usize::max);
    cut_err(end_of_line).parse_next(i)?;
    Ok(Invariant {
        sometimes: kind == Prop::Sometimes,
        eventually: kind == Prop::Eventually,
        leads_to,
        id,
        cond,
        when,
        span: Span::new(start.start, end),
    })
}

/// The keyword a property line starts with.
#[derive(Copy, Clone, PartialEq, Eq)]
enum Prop {
    Always,
    Sometimes,
    Eventually,
}

// ---- statements -------------------------------------------------------------------------------

/// `{`, statements one a line, `}`.
fn block(i: &mut In<'_>) -> PResult<Block> {
    nested(i, block_inner)
}

/// `p`, one level deeper; an error past [`NESTING_MAX`].
fn nested<T>(i: &mut In<'_>, p: impl FnOnce(&mut In<'_>) -> PResult<T>) -> PResult<T> {
    let depth = i.state.depth.get();
    deeper(i, "less nesting (64 levels at most)")?;
    let out = p(i);
    i.state.depth.set(depth);
    out
}

/// One level deeper, for the rest of the caller's rule (which sets the depth back); an error
/// saying `what` it expected past [`NESTING_MAX`].
fn deeper(i: &mut In<'_>, what: &'static str) -> PResult<()> {
    let depth = i.state.depth.get();
    if depth >= NESTING_MAX {
        let e = ContextError::new().add_context(i, &i.checkpoint(), expected(what));
        return Err(ErrMode::Cut(e));
    }
    i.state.depth.set(depth + 1);
    Ok(())
}

/// Past [`NESTING_MAX`] in a chain of operators.
const CHAIN_MAX: &str =
    "a shorter chain of operators (64 levels of nesting at most, an operator one each)";

/// `chain`, the depth set back after it: the levels its operators took are its own.
fn chained<T>(i: &mut In<'_>, chain: impl FnOnce(&mut In<'_>) -> PResult<T>) -> PResult<T> {
    let depth = i.state.depth.get();
    let out = chain(i);
    i.state.depth.set(depth);
    out
}

fn block_inner(i: &mut In<'_>) -> PResult<Block> {
    let open = sym("{").parse_next(i)?;
    opt(nl).parse_next(i)?;
    let stmts: Vec<Stmt> = repeat(0.., terminated_stmt).parse_next(i)?;
    let close = cut_err(sym("}"))
        .context(expected("a statement or `}`"))
        .parse_next(i)?;
    Ok(Block {
        stmts,
        span: Span::new(open.start, close.end),
    })
}

/// A statement and the line end after it (or the `}` closing its block, left for the block).
fn terminated_stmt(i: &mut In<'_>) -> PResult<Stmt> {
    let s = stmt(i)?;
    cut_err(alt((nl, peek(sym("}")).void())))
        .context(expected("the end of the statement's line"))
        .parse_next(i)?;
    Ok(s)
}

fn stmt(i: &mut In<'_>) -> PResult<Stmt> {
    let unfair = opt(kw("unfair")).parse_next(i)?;
    let label = opt((name, sym(":")).map(|(n, _)| n)).parse_next(i)?;
    let (kind, span) = stmt_kind.with_span().parse_next(i)?;
    let start = unfair
        .map(|s| s.start)
        .or(label.as_ref().map(|l| l.span.start))
        .unwrap_or(span.start);
    let end = last_end(i).clamp(span.start, span.end);
    Ok(Stmt {
        label,
        unfair: unfair.is_some(),
        kind,
        span: Span::new(start, end),
    })
}

/// The end of the last token read.
fn last_end(i: &In<'_>) -> usize {
    i.state.last_end.get()
}

fn stmt_kind(i: &mut In<'_>) -> PResult<StmtKind> {
    alt((
        alt((if_stmt, retry_stmt, for_each, loop_stmt, unbounded)),
        wait_stmt,
        either_stmt,
        timer_stmt,
        fail_stmt,
        flush_stmt,
        block.map(StmtKind::Atomic),
        assign_or_call,
    ))
    .context(expected("a statement"))
    .parse_next(i)
}

fn if_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    kw("if").parse_next(i)?;
    let (cond, then) = cut_err((expr, block))
        .context(StrContext::Label("an if statement"))
        .parse_next(i)?;
    let otherwise = opt(preceded(kw("else"), cut_err(else_branch))).parse_next(i)?;
    Ok(StmtKind::If {
        cond,
        then,
        otherwise,
    })
}

/// `else { … }`, or `else if …` as a block holding that one `if`.
fn else_branch(i: &mut In<'_>) -> PResult<Block> {
    let else_if = |i: &mut In<'_>| {
        let (kind, range) = if_stmt.with_span().parse_next(i)?;
        let span = Span::new(range.start, last_end(i).max(range.start));
        Ok(Block {
            stmts: vec![Stmt {
                label: None,
                unfair: false,
                kind,
                span,
            }],
            span,
        })
    };
    // An `else if` nests its `if` one level deeper, as `else { if … }` would.
    alt((block, move |i: &mut In<'_>| nested(i, else_if)))
        .context(expected("`{` or `if`"))
        .parse_next(i)
}

fn retry_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    (kw("retry"), peek(number)).parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let times = number(i)?;
        must(kw("times"), "`times`").parse_next(i)?;
        let body = block(i)?;
        must(kw("until"), "`until` and the condition that ends the retry").parse_next(i)?;
        let until = expr(i)?;
        Ok(StmtKind::Retry { times, body, until })
    };
    cut_err(rest)
        .context(StrContext::Label("a retry loop"))
        .parse_next(i)
}

fn for_each(i: &mut In<'_>) -> PResult<StmtKind> {
    (kw("for"), kw("each")).parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        must(kw("message"), "`message`").parse_next(i)?;
        let message = must(name, "the message's name").parse_next(i)?;
        let until = opt(preceded(kw("until"), expr)).parse_next(i)?;
        let body = block(i)?;
        Ok(StmtKind::ForEach {
            message,
            until,
            body,
        })
    };
    cut_err(rest)
        .context(StrContext::Label("a for each message loop"))
        .parse_next(i)
}

/// `while …`, `loop`, `for …` and `retry` without a count: parsed so that the checks can say why
/// they are rejected, up to the `{` of their body.
fn unbounded(i: &mut In<'_>) -> PResult<StmtKind> {
    let word = alt((
        literal("while"),
        literal("loop"),
        literal("for"),
        literal("retry"),
    ));
    let keyword = lexeme(
        (word, winnow::combinator::not(one_of(is_name_char)))
            .take()
            .map(str::to_string),
    )
    .parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        take_till(0.., ['{', '\n']).parse_next(i)?;
        block(i)
    };
    let body = cut_err(rest)
        .context(StrContext::Label("a loop"))
        .parse_next(i)?;
    // `retry { … } until COND`: the condition belongs to the loop.
    opt(preceded(kw("until"), expr)).parse_next(i)?;
    Ok(StmtKind::Unbounded { keyword, body })
}

/// `loop { … }`: a process's endless loop (rejected outside a process by the checks).
fn loop_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    (kw("loop"), peek(sym("{"))).parse_next(i)?;
    cut_err(block)
        .context(StrContext::Label("a loop"))
        .map(StmtKind::Loop)
        .parse_next(i)
}

fn wait_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    kw("wait").parse_next(i)?;
    cut_err(expr)
        .context(StrContext::Label("a wait statement"))
        .map(StmtKind::Wait)
        .parse_next(i)
}

/// `either { … } or { … } [or { … } …]`.
fn either_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    kw("either").parse_next(i)?;
    let rest = |i: &mut In<'_>| {
        let first = block(i)?;
        let more: Vec<Block> = repeat(1.., preceded(kw("or"), block)).parse_next(i)?;
        Ok(std::iter::once(first).chain(more).collect())
    };
    cut_err(rest)
        .context(StrContext::Label("an either statement"))
        .context(expected("`or { … }` after the first branch"))
        .map(StmtKind::Either)
        .parse_next(i)
}

/// `arm TIMER` or `cancel TIMER`.
fn timer_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    let arm = alt((kw("arm").value(true), kw("cancel").value(false))).parse_next(i)?;
    let timer = cut_err(indexed_name)
        .context(StrContext::Label("an arm or cancel statement"))
        .context(expected("the timer's name"))
        .parse_next(i)?;
    Ok(if arm {
        StmtKind::Arm(timer)
    } else {
        StmtKind::Cancel(timer)
    })
}

fn fail_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    kw("fail").parse_next(i)?;
    let fatal = opt(kw("fatal")).parse_next(i)?.is_some();
    let message = cut_err(string)
        .context(StrContext::Label("a fail statement"))
        .parse_next(i)?;
    Ok(StmtKind::Fail { fatal, message })
}

fn flush_stmt(i: &mut In<'_>) -> PResult<StmtKind> {
    kw("flush").parse_next(i)?;
    cut_err(indexed_name)
        .context(StrContext::Label("a flush statement"))
        .map(StmtKind::Flush)
        .parse_next(i)
}

/// `NAME = CALL`, `NAME = EXPR`, or `CALL` alone.
fn assign_or_call(i: &mut In<'_>) -> PResult<StmtKind> {
    let assign = |i: &mut In<'_>| {
        let target = indexed_name(i)?;
        sym("=").parse_next(i)?;
        let rhs = cut_err(alt((call.map(Ok), expr.map(Err))))
            .context(StrContext::Label("an assignment"))
            .parse_next(i)?;
        Ok(match rhs {
            Ok(call) => StmtKind::AssignCall { target, call },
            Err(value) => StmtKind::Assign { target, value },
        })
    };
    alt((assign, call.map(StmtKind::Call))).parse_next(i)
}

/// `CALLEE(ARGS)[.FIELD]`, where the callee is `NAME` or `NAME.NAME`, not `min`/`max`.
fn call(i: &mut In<'_>) -> PResult<Call> {
    let callee = callee(i)?;
    sym("(").parse_next(i)?;
    let args: Vec<Arg> = cut_err(separated(0.., arg, sym(","))).parse_next(i)?;
    let close = cut_err(sym(")"))
        .context(expected("`,` or `)`"))
        .parse_next(i)?;
    let field = opt(preceded(sym("."), must(any_word, "a field name"))).parse_next(i)?;
    let end = field.as_ref().map_or(close.end, |f| f.span.end);
    let on_error = opt(preceded(
        (kw("on"), must(kw("error"), "`error` and a block")),
        cut_err(block),
    ))
    .parse_next(i)?;
    Ok(Call {
        span: Span::new(callee.span.start, end),
        callee,
        args,
        field,
        on_error,
    })
}

fn callee(i: &mut In<'_>) -> PResult<Name> {
    let first = indexed_name(i)?;
    match opt(preceded(sym("."), any_word)).parse_next(i)? {
        Some(second) => {
            let span = Span::new(first.span.start, second.span.end);
            Ok(Spanned {
                node: format!("{}.{}", first.node, second.node),
                span,
            })
        }
        None => Ok(first),
    }
}

fn arg(i: &mut In<'_>) -> PResult<Arg> {
    let named = opt((
        any_word,
        sym("="),
        peek(winnow::combinator::not(literal("="))),
    ))
    .parse_next(i)?;
    let value = expr(i)?;
    let start = named
        .as_ref()
        .map_or(value.span.start, |(n, _, ())| n.span.start);
    Ok(Arg {
        span: Span::new(start, value.span.end),
        name: named.map(|(n, _, ())| n),
        value,
    })
}

// ---- expressions ------------------------------------------------------------------------------

/// An expression: `or` binds loosest, then `and`, `not`, comparisons, `+`/`-`, fields.
fn expr(i: &mut In<'_>) -> PResult<Expr> {
    nested(i, |i| binary_chain(i, ("or", BinOp::Or), and_expr))
}

fn and_expr(i: &mut In<'_>) -> PResult<Expr> {
    binary_chain(i, ("and", BinOp::And), not_expr)
}

/// `first (OP next)*`, folded to the left, each operator a level deeper.
fn binary_chain(
    i: &mut In<'_>,
    (word, op): (&'static str, BinOp),
    mut next: impl FnMut(&mut In<'_>) -> PResult<Expr>,
) -> PResult<Expr> {
    chained(i, |i| {
        let mut lhs = next(i)?;
        loop {
            let op = opt(kw(word).value(op)).parse_next(i)?;
            let Some(op) = op else { return Ok(lhs) };
            deeper(i, CHAIN_MAX)?;
            let rhs = cut_err(|i: &mut In<'_>| next(i)).parse_next(i)?;
            lhs = binary(op, lhs, rhs);
        }
    })
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    let span = Span::new(lhs.span.start, rhs.span.end);
    Spanned {
        node: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
        span,
    }
}

fn not_expr(i: &mut In<'_>) -> PResult<Expr> {
    match opt(kw("not")).parse_next(i)? {
        Some(start) => {
            let inner = cut_err(|i: &mut In<'_>| nested(i, not_expr)).parse_next(i)?;
            let span = Span::new(start.start, inner.span.end);
            Ok(Spanned {
                node: ExprKind::Not(Box::new(inner)),
                span,
            })
        }
        None => comparison(i),
    }
}

fn comparison(i: &mut In<'_>) -> PResult<Expr> {
    let lhs = sum(i)?;
    let op = opt(alt((
        sym("==").value(BinOp::Eq),
        sym("!=").value(BinOp::Ne),
        sym("<=").value(BinOp::Le),
        sym(">=").value(BinOp::Ge),
        sym("<").value(BinOp::Lt),
        sym(">").value(BinOp::Gt),
    )))
    .parse_next(i)?;
    match op {
        Some(op) => {
            let rhs = cut_err(sum).parse_next(i)?;
            Ok(binary(op, lhs, rhs))
        }
        None => Ok(lhs),
    }
}

fn sum(i: &mut In<'_>) -> PResult<Expr> {
    chained(i, |i| {
        let mut lhs = postfix(i)?;
        loop {
            let op = opt(alt((
                sym("+").value(BinOp::Add),
                sym("-").value(BinOp::Sub),
            )))
            .parse_next(i)?;
            let Some(op) = op else { return Ok(lhs) };
            deeper(i, CHAIN_MAX)?;
            let rhs = cut_err(postfix).parse_next(i)?;
            lhs = binary(op, lhs, rhs);
        }
    })
}

fn postfix(i: &mut In<'_>) -> PResult<Expr> {
    chained(i, |i| {
        let mut e = primary(i)?;
        let dot = |i: &mut In<'_>| preceded(sym("."), must(any_word, "a field name")).parse_next(i);
        while let Some(field) = opt(dot).parse_next(i)? {
            deeper(i, CHAIN_MAX)?;
            let span = Span::new(e.span.start, field.span.end);
            e = Spanned {
                node: ExprKind::Field(Box::new(e), field),
                span,
            };
        }
        Ok(e)
    })
}

fn primary(i: &mut In<'_>) -> PResult<Expr> {
    alt((
        lsn.map(|l| Spanned {
            node: ExprKind::Lsn(l.node),
            span: l.span,
        }),
        counter_number.map(|n| Spanned {
            node: ExprKind::Number(n.node),
            span: n.span,
        }),
        kw("none").map(|span| Spanned {
            node: ExprKind::None,
            span,
        }),
        kw("true").map(|span| Spanned {
            node: ExprKind::Bool(true),
            span,
        }),
        kw("false").map(|span| Spanned {
            node: ExprKind::Bool(false),
            span,
        }),
        min_max,
        position,
        variable,
        parenthesised,
    ))
    .context(expected("an expression"))
    .parse_next(i)
}

/// A variable's name as a value; a name followed by `(` is a call, which only a statement may
/// make: the error says to assign the call's result first.
fn variable(i: &mut In<'_>) -> PResult<Expr> {
    let n = indexed_name.parse_next(i)?;
    if opt(peek(sym("("))).parse_next(i)?.is_some() {
        let e = ContextError::new().add_context(i, &i.checkpoint(), expected(CALL_IN_EXPRESSION));
        return Err(ErrMode::Cut(e));
    }
    Ok(Spanned {
        node: ExprKind::Var(n.node),
        span: n.span,
    })
}

/// A call where a value is wanted (a condition, `min`/`max`, an operand).
const CALL_IN_EXPRESSION: &str =
    "a value, not a call: a call is a statement of its own, so assign its result to a variable first (`x = pg_current_wal_lsn()`) and use the variable here";

fn min_max(i: &mut In<'_>) -> PResult<Expr> {
    let (max, start) =
        alt((kw("min").map(|s| (false, s)), kw("max").map(|s| (true, s)))).parse_next(i)?;
    let rest = (sym("("), expr, sym(","), expr, sym(")"));
    let (_, a, _, b, close) = cut_err(rest)
        .context(StrContext::Label("min or max"))
        .parse_next(i)?;
    Ok(Spanned {
        node: ExprKind::MinMax {
            max,
            args: Box::new([a, b]),
        },
        span: Span::new(start.start, close.end),
    })
}

/// `in NAME` and `at NAME`: where the connector is (properties only).
fn position(i: &mut In<'_>) -> PResult<Expr> {
    let (at, start) =
        alt((kw("in").map(|s| (false, s)), kw("at").map(|s| (true, s)))).parse_next(i)?;
    let target = cut_err(indexed_name).parse_next(i)?;
    let span = Span::new(start.start, target.span.end);
    let node = if at {
        ExprKind::At(target)
    } else {
        ExprKind::In(target)
    };
    Ok(Spanned { node, span })
}

fn parenthesised(i: &mut In<'_>) -> PResult<Expr> {
    let open = sym("(").parse_next(i)?;
    let inner = cut_err(expr).parse_next(i)?;
    let close = cut_err(sym(")")).parse_next(i)?;
    Ok(Spanned {
        node: inner.node,
        span: Span::new(open.start, close.end),
    })
}
