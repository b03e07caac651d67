//! Log sequence numbers: byte positions in PostgreSQL's write-ahead log.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A position in the WAL, in bytes from the start of the log.
///
/// Printed and parsed in PostgreSQL's `X/Y` form: the high and low 32 bits in upper-case hex
/// without leading zeros, as `pg_lsn`'s output function writes them (PostgreSQL 15
/// `utils/adt/pg_lsn.c:pg_lsn_out`, `"%X/%X"`). `Lsn(0)` is `InvalidXLogRecPtr` (`0/0`).
/// Serialized as that text so that traces stay readable.
#[derive(Copy, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    /// `InvalidXLogRecPtr`: PostgreSQL's "no position" (`0/0`).
    pub const INVALID: Lsn = Lsn(0);

    /// The position in bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }

    /// Whether this is a real position (not `0/0`), as `XLogRecPtrIsInvalid` negated.
    pub const fn is_valid(self) -> bool {
        self.0 != 0
    }

    /// This position plus `bytes`, saturating at the end of the address space.
    pub const fn plus(self, bytes: u64) -> Lsn {
        Lsn(self.0.saturating_add(bytes))
    }

    /// This position minus `bytes`, saturating at `0/0`.
    pub const fn minus(self, bytes: u64) -> Lsn {
        Lsn(self.0.saturating_sub(bytes))
    }

    /// Rounded down to a multiple of `page_bytes` (the start of the page this byte is on).
    pub const fn page_floor(self, page_bytes: u64) -> Lsn {
        Lsn(self.0 - self.0 % page_bytes)
    }

    /// Rounded up to a multiple of `page_bytes` (the end of the page this byte is on).
    pub const fn page_ceil(self, page_bytes: u64) -> Lsn {
        match self.0 % page_bytes {
            0 => self,
            rem => Lsn(self.0.saturating_add(page_bytes - rem)),
        }
    }
}

/// A WAL position as a model counts it: an [`Lsn`] (bytes) where the model lays records out, or
/// a small ordered count where only the order of positions matters (Electric's model numbers
/// transactions with a `u8`: transaction `t` ends at position `t`). PostgreSQL's rules that only
/// compare positions (a standby status update's, `LogicalConfirmReceivedLocation`'s, the
/// walsender's `sentPtr`) are written once over this trait (`crate::pg::stream`,
/// `crate::pg::decoding`), so every system calls the same rule whatever its position type.
///
/// Zero is `InvalidXLogRecPtr` (`0/0`), PostgreSQL's "no position".
pub trait WalPosition: Copy + Ord {
    /// `InvalidXLogRecPtr`.
    const INVALID: Self;

    /// Whether this is a real position, as `XLogRecPtrIsInvalid` negated.
    fn is_valid_position(self) -> bool {
        self != Self::INVALID
    }
}

impl WalPosition for Lsn {
    const INVALID: Lsn = Lsn::INVALID;
}

/// A transaction number of a model that counts transactions, not bytes; `0` is before the first.
impl WalPosition for u8 {
    const INVALID: u8 = 0;
}

impl fmt::Display for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xFFFF_FFFF)
    }
}

impl fmt::Debug for Lsn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// Text that is not an LSN in PostgreSQL's `X/Y` form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLsnError {
    /// The text as given.
    pub input: String,
}

impl fmt::Display for ParseLsnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid LSN {:?}: expected X/Y with 1 to 8 hex digits on each side, e.g. 13/4964E000",
            self.input
        )
    }
}

impl std::error::Error for ParseLsnError {}

impl FromStr for Lsn {
    type Err = ParseLsnError;

    /// Parses `X/Y` as `pg_lsn_in` does (PostgreSQL 15 `utils/adt/pg_lsn.c:pg_lsn_in_internal`):
    /// two runs of 1 to 8 hex digits around one `/`, either case, nothing else.
    fn from_str(text: &str) -> Result<Lsn, ParseLsnError> {
        let err = || ParseLsnError {
            input: text.to_owned(),
        };
        let (hi, lo) = text.split_once('/').ok_or_else(err)?;
        let half = |part: &str| -> Result<u64, ParseLsnError> {
            let hex_digits = !part.is_empty() && part.bytes().all(|b| b.is_ascii_hexdigit());
            if !hex_digits || part.len() > 8 {
                return Err(err());
            }
            u64::from_str_radix(part, 16).map_err(|_| err())
        };
        Ok(Lsn((half(hi)? << 32) | half(lo)?))
    }
}

/// As PostgreSQL prints it (`"0/153E240"`) in a human-readable format (JSON, traces); as its
/// byte position, a `u64`, in a binary one (the checker's packed states).
impl Serialize for Lsn {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            serializer.collect_str(self)
        } else {
            serializer.serialize_u64(self.0)
        }
    }
}

impl<'de> Deserialize<'de> for Lsn {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Lsn, D::Error> {
        if deserializer.is_human_readable() {
            let text = String::deserialize(deserializer)?;
            text.parse().map_err(serde::de::Error::custom)
        } else {
            u64::deserialize(deserializer).map(Lsn)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn prints_as_postgresql_does() {
        assert_eq!(Lsn(0).to_string(), "0/0");
        assert_eq!(Lsn(0x13_4964_E000).to_string(), "13/4964E000");
        assert_eq!(Lsn(0x153_E240).to_string(), "0/153E240");
        assert_eq!(Lsn(u64::MAX).to_string(), "FFFFFFFF/FFFFFFFF");
    }

    #[test]
    fn parses_both_cases() {
        assert_eq!("13/4964E000".parse(), Ok(Lsn(0x13_4964_E000)));
        assert_eq!("13/4964e000".parse(), Ok(Lsn(0x13_4964_E000)));
        assert_eq!("0/0".parse(), Ok(Lsn::INVALID));
    }

    #[test]
    fn rejects_bad_text_naming_it() {
        for bad in [
            "",
            "/",
            "13",
            "13/",
            "/4964E000",
            "13/4964E000/1",
            "G/0",
            "123456789/0",
            " 0/0",
            "0/-1",
            "+1/0",
        ] {
            let err = bad.parse::<Lsn>().unwrap_err();
            assert_eq!(err.input, bad);
            assert!(err.to_string().contains(&format!("{bad:?}")), "{err}");
        }
    }

    #[test]
    fn page_rounding() {
        assert_eq!(Lsn(8192 * 3 + 1).page_floor(8192), Lsn(8192 * 3));
        assert_eq!(Lsn(8192 * 3 + 1).page_ceil(8192), Lsn(8192 * 4));
        assert_eq!(Lsn(8192 * 3).page_ceil(8192), Lsn(8192 * 3));
    }

    #[test]
    fn serializes_as_text() {
        let json = serde_json::to_string(&Lsn(0x13_4964_E000)).unwrap();
        assert_eq!(json, "\"13/4964E000\"");
        assert_eq!(
            serde_json::from_str::<Lsn>(&json).unwrap(),
            Lsn(0x13_4964_E000)
        );
    }

    proptest! {
        #[test]
        fn display_then_parse_round_trips(bytes in any::<u64>()) {
            let lsn = Lsn(bytes);
            prop_assert_eq!(lsn.to_string().parse::<Lsn>(), Ok(lsn));
        }

        #[test]
        fn parse_then_display_is_canonical(hi in any::<u32>(), lo in any::<u32>()) {
            let text = format!("{hi:x}/{lo:08x}");
            let lsn: Lsn = text.parse().unwrap();
            prop_assert_eq!(lsn.to_string(), format!("{hi:X}/{lo:X}"));
        }
    }
}
