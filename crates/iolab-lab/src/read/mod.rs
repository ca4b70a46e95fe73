//! Read methods: the library's, one by one (`count_input`, `auto`'s rule, each method's
//! module), and the laboratory's count of many files at once ([`many::count_files`]).

pub use iolab::lab::read::*;

pub mod many;
