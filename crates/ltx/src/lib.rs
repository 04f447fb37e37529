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
//! bytes alone, [`decode_frames`] decodes any run of frames from memory, and
//! [`verify_file_checksum`] joins the per-thread CRCs. All integers are
//! big-endian on disk; the page index uses LEB128 varints.

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
    check_layout, decode_file, decode_frames, verify_file_checksum, Decoded, DecodedFile, Decoder,
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
