//! The README and the book (`docs/book/`): links that lead somewhere, and
//! examples that run as shown.

pub mod book;
