//! Feeds arbitrary bytes to every way the replica decodes an LTX file: the
//! streaming decoder, the tail with ranged frame runs and the file
//! checksum joined from them, and single frames found through the tail.
//! libFuzzer reports a panic, an overflow or an allocation past its limit;
//! what decodes is not checked here (the mutation test checks that).

#![no_main]

use libfuzzer_sys::fuzz_target;
use offloop_ltx::{
    check_tail, decode_file, decode_frame, decode_frames, decode_tail, verify_file_checksum,
    Header,
};

fuzz_target!(|data: &[u8]| {
    let _ = decode_file(data);
    let size = data.len() as u64;
    let (Ok(tail), Ok(header)) = (decode_tail(data, size), Header::decode(data)) else {
        return;
    };
    if check_tail(&header, &tail).is_err() {
        return;
    }
    let entries = &tail.index.entries;
    let mut page = vec![0u8; header.page_size as usize];
    for e in entries {
        let frame = &data[e.offset as usize..(e.offset + e.size) as usize];
        let _ = decode_frame(frame, &mut page);
    }
    if let Ok(crc) = decode_frames(data, 0, header.page_size, entries, |_, _| Ok(())) {
        let _ = verify_file_checksum(data, &[crc], &tail);
    }
});
