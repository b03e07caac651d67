//! PostgreSQL's errors as the live backend words them: the server's own message with its
//! SQLSTATE, which the `postgres` crate's text of a server error leaves out.

/// A client error as PostgreSQL said it (`ERROR 42P07: relation "…" already exists`): the
/// `postgres` crate's own text of a server error is only `db error`.
/// Any other error is shown as it is.
pub fn pg_message<E: std::fmt::Display + 'static>(e: &E) -> String {
    let db = (e as &dyn std::any::Any)
        .downcast_ref::<postgres::Error>()
        .and_then(postgres::Error::as_db_error);
    match db {
        Some(db) => format!("{} {}: {}", db.severity(), db.code().code(), db.message()),
        None => e.to_string(),
    }
}

/// `(sqlstate, message)` of a server error, or the error's text.
pub fn db_error(e: &postgres::Error) -> (String, String) {
    match e.as_db_error() {
        Some(db) => (db.code().code().to_owned(), db.message().to_owned()),
        None => (String::new(), e.to_string()),
    }
}
