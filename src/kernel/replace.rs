//! Byte-replacement kernels (to be written: issue 6).
