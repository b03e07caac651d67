//! The live ladder (below).
