//! What a connector file gets wrong, as one [`Diagnostic`] type: a code, a message, the text it
//! is about (underlined with a label) and a hint. [`Diagnostic::render`] prints it with the
//! file's name, line and column, as plain text (no colour), the same on every run.

use std::fmt;

use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};

use crate::ast::Span;

/// Whether a diagnostic stops the file from being checked.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The file is rejected (exit 2).
    Error,
    /// The file is checked; the warning says what is probably unintended.
    Warning,
}

/// Every kind of diagnostic, with its stable code (`E…` errors, `W…` warnings).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// The text does not follow the grammar.
    Syntax,
    /// No `walcheck N` line first.
    MissingVersion,
    /// A version this walcheck does not know.
    UnknownVersion,
    /// A name used but never declared.
    UndeclaredVariable,
    /// A call to nothing PostgreSQL, the destination or the file defines.
    UnknownCall,
    /// A field a call's result, a message or a transaction does not have.
    UnknownField,
    /// A value of one type where another is needed.
    TypeMismatch,
    /// A call given the wrong arguments.
    BadArguments,
    /// A loop with no bound in its syntax.
    UnboundedLoop,
    /// `expect` or `skip` naming a property the file does not have.
    UnknownProperty,
    /// An `env` line naming no knob, or a value outside its range.
    BadKnob,
    /// A name declared twice, or a reserved name.
    Duplicate,
    /// A construct in a place where it cannot mean anything (a loop inside one atomic step, a
    /// property's condition in the code, a second `every run`).
    Misplaced,
    /// A file past one of walcheck's limits on its size: its properties, the instructions its
    /// runs compile to, how deep its inlined procedures nest.
    Limit,
    /// A step no run can reach.
    Unreachable,
    /// A message field only pgoutput's messages one by one set, read where the stream sends
    /// whole transactions.
    WholeTransactions,
}

impl Code {
    /// The stable code printed in brackets: `E03`, `W01`.
    pub const fn id(self) -> &'static str {
        match self {
            Code::Syntax => "E01",
            Code::MissingVersion => "E02",
            Code::UnknownVersion => "E03",
            Code::UndeclaredVariable => "E04",
            Code::UnknownCall => "E05",
            Code::UnknownField => "E06",
            Code::TypeMismatch => "E07",
            Code::BadArguments => "E08",
            Code::UnboundedLoop => "E09",
            Code::UnknownProperty => "E10",
            Code::BadKnob => "E11",
            Code::Duplicate => "E12",
            Code::Misplaced => "E13",
            Code::Limit => "E14",
            Code::Unreachable => "W01",
            Code::WholeTransactions => "W02",
        }
    }

    /// Whether the code is an error or a warning.
    pub const fn severity(self) -> Severity {
        match self {
            Code::Unreachable | Code::WholeTransactions => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// One finding about a file: what is wrong, where, and how to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Which rule, and whether it is an error or a warning.
    pub code: Code,
    /// The headline: `undeclared variable \`w0\``.
    pub message: String,
    /// The text the diagnostic is about (bytes of the file).
    pub span: Span,
    /// What the underline says about that text.
    pub label: String,
    /// How to fix it, if there is a likely fix.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// A diagnostic of `code` about the text at `span`.
    pub fn new(
        code: Code,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            message: message.into(),
            span,
            label: label.into(),
            hint: None,
        }
    }

    /// The same with a hint.
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Whether it is an error or a warning.
    pub const fn severity(&self) -> Severity {
        self.code.severity()
    }

    /// The diagnostic as plain text: `error[E04]: …`, then `╭─[ FILE:LINE:COLUMN ]`, the line
    /// with the text underlined and labelled, and the hint. No colour: the same bytes on every
    /// run and every terminal. `file_name` is how the file is named (as the user gave its path).
    pub fn render(&self, file_name: &str, source: &str) -> String {
        let kind = match self.severity() {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let span = self.clamped(source);
        let config = Config::default()
            .with_color(false)
            .with_index_type(IndexType::Byte);
        let mut report = Report::build(kind, (file_name, span.clone()))
            .with_config(config)
            .with_code(self.code)
            .with_message(&self.message)
            .with_label(Label::new((file_name, span)).with_message(&self.label));
        if let Some(hint) = &self.hint {
            report = report.with_help(hint);
        }
        let mut out = Vec::new();
        let written = report
            .finish()
            .write((file_name, Source::from(source)), &mut out);
        match written {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            // Writing to memory does not fail; if it ever did, the headline still says it all.
            Err(_) => format!("{}[{}]: {}\n", kind, self.code, self.message),
        }
    }

    /// The span inside `source`, on character boundaries, at least one byte where the source
    /// has one (an error at the end of the file underlines its last character).
    fn clamped(&self, source: &str) -> std::ops::Range<usize> {
        let floor = |mut i: usize| {
            i = i.min(source.len());
            while !source.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let mut start = floor(self.span.start);
        let mut end = floor(self.span.end.max(start));
        if start == end {
            match source[end..].chars().next() {
                Some(c) => end += c.len_utf8(),
                None => start = floor(start.saturating_sub(1)),
            }
        }
        start..end
    }
}

/// Every diagnostic rendered in order, each followed by a blank line.
pub fn render_all(diagnostics: &[Diagnostic], file_name: &str, source: &str) -> String {
    diagnostics
        .iter()
        .map(|d| d.render(file_name, source) + "\n")
        .collect()
}

/// The known name closest to `name`, if one is close enough to be a likely typo:
/// `did you mean \`pg_replication_slot_advance\`?`.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    // Jaro-Winkler for long names; one edit away for short ones (`wO` for `w0`).
    let close =
        |k: &str| strsim::jaro_winkler(name, k) >= 0.8 || strsim::damerau_levenshtein(name, k) <= 1;
    let best = known
        .into_iter()
        .filter(|k| close(k) && *k != name)
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))?;
    Some(format!("did you mean `{}`?", best.1))
}
