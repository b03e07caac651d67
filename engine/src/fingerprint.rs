//! Fingerprints: a state's fixed-size digest, as the compact engine's table and the liveness
//! checker's graph store it in place of the state. XXH3 over the bytes a state's `Hash` writes
//! (never std's `RandomState`), so the same state gives the same fingerprint on every run and
//! every thread.

use std::hash::{Hash, Hasher};

use xxhash_rust::xxh3;

/// A fixed-size digest of a state, as stored in the table.
pub trait Fingerprint: Copy + Eq + Default + Send + Sync + 'static {
    /// Bits in the digest, for [`CollisionEstimate`](crate::compact::CollisionEstimate).
    const BITS: u32;
    /// The bits that pick the digest's table slot.
    fn slot_bits(self) -> u64;
    /// The digest, widened for error messages.
    fn widen(self) -> u128;
}

impl Fingerprint for u64 {
    const BITS: u32 = 64;
    fn slot_bits(self) -> u64 {
        self
    }
    fn widen(self) -> u128 {
        self.into()
    }
}

impl Fingerprint for u128 {
    const BITS: u32 = 128;
    fn slot_bits(self) -> u64 {
        self as u64
    }
    fn widen(self) -> u128 {
        self
    }
}

/// Computes states' fingerprints. Must be deterministic: the same state gives the same
/// fingerprint on every call, on every thread, and the rebuild of a path relies on it.
pub trait Fingerprinter<S>: Sync {
    type Print: Fingerprint;
    fn fingerprint(&self, state: &S) -> Self::Print;
}

/// 64-bit fingerprints: XXH3 of the bytes a state's `Hash` writes (never std's `RandomState`).
#[derive(Copy, Clone, Debug, Default)]
pub struct Xxh64;

/// 128-bit fingerprints: XXH3's 128-bit digest of the same bytes. For spaces where 64 bits'
/// [`CollisionEstimate`](crate::compact::CollisionEstimate) is too high.
#[derive(Copy, Clone, Debug, Default)]
pub struct Xxh128;

impl<S: Hash> Fingerprinter<S> for Xxh64 {
    type Print = u64;
    fn fingerprint(&self, state: &S) -> u64 {
        Bytes::of(state).digest(xxh3::xxh3_64, xxh3::Xxh3::digest)
    }
}

impl<S: Hash> Fingerprinter<S> for Xxh128 {
    type Print = u128;
    fn fingerprint(&self, state: &S) -> u128 {
        Bytes::of(state).digest(xxh3::xxh3_128, xxh3::Xxh3::digest128)
    }
}

/// [`Xxh64`]'s fingerprints cut to their low `bits` bits, so that distinct states share them:
/// for tests of what a collision does (run with [`Options::verify_duplicates`](crate::compact::Options::verify_duplicates) to have every one
/// found).
#[derive(Copy, Clone, Debug)]
pub struct Narrow {
    pub bits: u32,
}

impl<S: Hash> Fingerprinter<S> for Narrow {
    type Print = u64;
    fn fingerprint(&self, state: &S) -> u64 {
        let print: u64 = Xxh64.fingerprint(state);
        print & (u64::MAX >> 64u32.saturating_sub(self.bits).min(63))
    }
}

/// Bytes a [`Bytes`] holds before it passes them on to a stream.
const HELD_BYTES: usize = 256;

/// The bytes a state's `Hash` writes, in order, as std's `Hasher` defines them (each integer
/// as its little-endian bytes), except that a `usize` is LEB128. `Hash` implementations write a
/// prefix-free sequence, so distinct states write distinct bytes, and a fingerprint is a digest
/// of them.
/// Writing into a buffer and hashing it at the end costs a store a field, where a hash
/// mixed field by field waits on a multiply for each.
struct Bytes {
    held: [u8; HELD_BYTES],
    len: usize,
    /// The stream that the bytes before `held` went to, once there were more than it holds.
    spilled: Option<Box<xxh3::Xxh3>>,
}

impl Bytes {
    #[inline]
    fn new() -> Bytes {
        Bytes {
            held: [0; HELD_BYTES],
            len: 0,
            spilled: None,
        }
    }

    /// The bytes `state`'s `Hash` writes.
    #[inline]
    fn of<S: Hash>(state: &S) -> Bytes {
        let mut bytes = Bytes::new();
        state.hash(&mut bytes);
        bytes
    }

    /// The digest of all the bytes: `whole`'s of the buffer when they fit in it, else `end`'s of
    /// the stream they went to.
    #[inline]
    fn digest<T>(mut self, whole: fn(&[u8]) -> T, end: fn(&xxh3::Xxh3) -> T) -> T {
        match self.spilled.take() {
            None => whole(self.held()),
            Some(mut stream) => {
                stream.update(self.held());
                end(&stream)
            }
        }
    }

    #[inline]
    fn held(&self) -> &[u8] {
        &self.held[..self.len]
    }

    #[inline(always)]
    fn push<const N: usize>(&mut self, bytes: [u8; N]) {
        if self.len + N > HELD_BYTES {
            self.spill();
        }
        self.held[self.len..self.len + N].copy_from_slice(&bytes);
        self.len += N;
    }

    fn write_varint(&mut self, mut i: u64) {
        while i >= 0x80 {
            self.push([i as u8 | 0x80]);
            i >>= 7;
        }
        self.push([i as u8]);
    }

    #[cold]
    fn spill(&mut self) {
        let stream = self.spilled.get_or_insert_with(Default::default);
        stream.update(&self.held[..self.len]);
        self.len = 0;
    }
}

impl Hasher for Bytes {
    /// Only for `Hasher`'s contract: fingerprints are taken from the bytes by [`Xxh64`] and
    /// [`Xxh128`].
    fn finish(&self) -> u64 {
        let mut stream = self.spilled.as_deref().cloned().unwrap_or_default();
        stream.update(self.held());
        stream.digest()
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > HELD_BYTES {
            self.spill();
            if bytes.len() > HELD_BYTES {
                self.spilled.as_mut().expect("spilled").update(bytes);
                return;
            }
        }
        self.held[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.push(i.to_le_bytes());
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.push(i.to_le_bytes());
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.push(i.to_le_bytes());
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.push(i.to_le_bytes());
    }
    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.push(i.to_le_bytes());
    }
    /// As LEB128, so that the discriminants and lengths that most `usize`s are take a byte:
    /// still prefix-free, since each is self-delimiting.
    #[inline]
    fn write_usize(&mut self, i: usize) {
        if i < 0x80 {
            self.push([i as u8]);
        } else {
            self.write_varint(i as u64);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_fixed_and_spread() {
        let a: u64 = Xxh64.fingerprint(&(1u8, 2u8));
        assert_eq!(a, Xxh64.fingerprint(&(1u8, 2u8)), "no random seed");
        assert_ne!(a, Xxh64.fingerprint(&(2u8, 1u8)));
        // Inputs that differ only in their high bits still differ in the low ones.
        let high: u64 = Xxh64.fingerprint(&(1u64 << 40));
        let low: u64 = Xxh64.fingerprint(&0u64);
        assert_ne!(high & 0xffff_ffff, low & 0xffff_ffff);
    }

    #[test]
    fn fingerprints_digest_every_byte_past_the_buffer() {
        // 600 pairs write 2 + 600 * 9 bytes, through the buffer twenty-one times.
        let long: Vec<(u64, u8)> = (0..600).map(|i| (i * 0x0101_0101, i as u8)).collect();
        let mut bytes = vec![0xd8, 0x04]; // 600 as LEB128
        for &(word, byte) in &long {
            bytes.extend(word.to_le_bytes());
            bytes.push(byte);
        }
        assert_eq!(Xxh64.fingerprint(&long), xxh3::xxh3_64(&bytes));
        assert_eq!(Xxh128.fingerprint(&long), xxh3::xxh3_128(&bytes));
        // One write longer than the buffer.
        let text = "x".repeat(3 * HELD_BYTES);
        let mut bytes = text.clone().into_bytes();
        bytes.push(0xff); // `str`'s end marker
        assert_eq!(Xxh64.fingerprint(&text), xxh3::xxh3_64(&bytes));
        let mut changed = long.clone();
        changed[599].1 ^= 1;
        assert_ne!(Xxh64.fingerprint(&long), Xxh64.fingerprint(&changed));
    }
}
