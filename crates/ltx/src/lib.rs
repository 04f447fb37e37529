//! The LTX file format as Litestream 0.5 reads and writes it (ltx 0.5.x):
//! one file holds the pages a range of transactions changed, LZ4-compressed,
//! with a page index at the end and CRC-64/ISO checksums.
//!
//! # Design
//!
//! Pure data and arithmetic: the crate never opens a file, a socket or a
//! thread. [`Encoder`] writes a file to any `Write`; [`Decoder`] reads one
//! from any `Read` and verifies it. For random access — the restore that
//! decodes one file on several threads, the paged restore that fetches a
//! single page — [`decode_tail`] reads the page index from a file's last
//! bytes alone, [`check_tail`] holds it to the file's header,
//! [`decode_frames`] decodes any run of frames from memory, and
//! [`verify_file_checksum`] joins the per-thread CRCs. All integers are
//! big-endian on disk; the page index uses LEB128 varints.
//!
//! # Damaged files
//!
//! Bytes from a replica are untrusted. Every way in refuses a damaged file
//! with an [`Error`] that says what is wrong, never panics, and sizes no
//! buffer from a field it has not checked against the bytes present: a
//! frame's size prefix is bounded by what one page can compress to, a
//! header's commit size allocates nothing, and index entries are held to
//! lie end to end inside the file. The file checksum covers every page
//! decompressed, so a frame that decodes to other bytes is caught, but only
//! once the whole file was read: a caller that must not use a page before
//! it is verified verifies first (see `crates/ltx/tests/mutations.rs` for
//! what is tried).

mod checksum;
mod decoder;
mod encoder;
mod error;
mod frame;
mod header;
mod index;
mod txid;

pub use checksum::{crc64, crc64_combine, page_checksum, Crc64, DatabaseChecksum, CHECKSUM_FLAG};
pub use decoder::{
    check_layout, check_tail, decode_file, decode_frames, verify_file_checksum, Decoded,
    DecodedFile, Decoder,
};
pub use encoder::{Encoded, Encoder};
pub use error::{Error, Result};
pub use frame::{decode_frame, Frame};
pub use header::{
    file_name, is_valid_page_size, lock_pgno, parse_file_name, Header, PageHeader, Trailer,
    HEADER_FLAG_NO_CHECKSUM, HEADER_SIZE, MAGIC, PAGE_FLAG_SIZE, PAGE_HEADER_SIZE, TRAILER_SIZE,
};
pub use index::{decode_tail, tail_size, IndexEntry, PageIndex, Tail, TAIL_FETCH_SIZE};
pub use txid::Txid;
