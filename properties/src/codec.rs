//! A state's codec: how an engine may hold a model's states packed into bytes. A system gives one
//! with [`crate::system::System::codec`]; the compact engine packs a large breadth-first level with it.

use std::sync::Arc;

/// How the engine may hold a model's states packed into bytes in a breadth-first level that
/// would otherwise hold more than the compact engine's `Options::pack_above_bytes` of whole states: `encode`
/// appends a state's bytes to a buffer, `decode` gives the state back from exactly those bytes.
/// Both are shared closures, so that they may carry what a state's bytes leave out (a
/// connector file's model restores the program its states name); cloning a codec clones the
/// two `Arc`s.
///
/// Equal states must encode to equal bytes, and `decode(encode(s)) == s`: the engine expands
/// the decoded state in place of the one it packed. [`Codec::postcard`]
/// is one for any state that serde serializes; the built-in systems' models give it
/// (`System::codec`); [`Codec::new`] takes any two functions.
pub struct Codec<S> {
    pub encode: Encode<S>,
    pub decode: Decode<S>,
}

/// A [`Codec`]'s `encode`: appends a state's bytes to a buffer.
pub type Encode<S> = Arc<dyn Fn(&S, &mut Vec<u8>) + Send + Sync>;

/// A [`Codec`]'s `decode`: the state back from exactly the bytes `encode` appended.
pub type Decode<S> = Arc<dyn Fn(&[u8]) -> S + Send + Sync>;

impl<S> Clone for Codec<S> {
    fn clone(&self) -> Self {
        Codec {
            encode: Arc::clone(&self.encode),
            decode: Arc::clone(&self.decode),
        }
    }
}

impl<S> Codec<S> {
    /// The codec of `encode`, which appends a state's bytes to a buffer, and `decode`, which
    /// gives the state back from exactly those bytes.
    pub fn new(
        encode: impl Fn(&S, &mut Vec<u8>) + Send + Sync + 'static,
        decode: impl Fn(&[u8]) -> S + Send + Sync + 'static,
    ) -> Codec<S> {
        Codec {
            encode: Arc::new(encode),
            decode: Arc::new(decode),
        }
    }
}

impl<S: serde::Serialize + serde::de::DeserializeOwned + 'static> Codec<S> {
    /// serde's serialization in postcard's format: integers as varints (an LSN below 2^21
    /// bytes takes 3 bytes), no field names, so about a quarter of the OLake state's 272 bytes.
    pub fn postcard() -> Codec<S> {
        Codec::new(encode_postcard::<S>, decode_postcard::<S>)
    }
}

/// Appends `state` serialized by serde in postcard's format to `out` ([`Codec::postcard`]'s
/// `encode`).
pub fn encode_postcard<S: serde::Serialize>(state: &S, out: &mut Vec<u8>) {
    let bytes = postcard::to_extend(state, std::mem::take(out));
    *out = bytes.expect("postcard serializes every state a model derives Serialize for");
}

/// The state `bytes` hold in postcard's format ([`Codec::postcard`]'s `decode`).
pub fn decode_postcard<S: serde::de::DeserializeOwned>(bytes: &[u8]) -> S {
    postcard::from_bytes(bytes).expect("a state the engine packed decodes")
}
