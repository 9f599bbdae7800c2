//! (being filled)
