//! The encoder and decoder agree with each other and with the format's
//! rules: what is written reads back page for page, through the streaming
//! decoder and through the page index on several threads, and any damage
//! is caught.

use std::io::Write;

use offloop_ltx::*;

const PAGE: u32 = 4096;

fn page(pgno: u32, salt: u8) -> Vec<u8> {
    (0..PAGE)
        .map(|i| {
            ((i / 64) as u8)
                .wrapping_add(pgno as u8)
                .wrapping_mul(salt | 1)
        })
        .collect()
}

fn header(min: u64, max: u64, commit: u32) -> Header {
    Header {
        flags: HEADER_FLAG_NO_CHECKSUM,
        page_size: PAGE,
        commit,
        min_txid: Txid::new(min).expect("a TXID is at least 1"),
        max_txid: Txid::new(max).expect("a TXID is at least 1"),
        timestamp: 1_764_500_000_000,
        ..Header::default()
    }
}

fn encode(h: Header, pages: &[(u32, Vec<u8>)], post: u64) -> Encoded<Vec<u8>> {
    let mut enc = Encoder::new(Vec::new(), h).unwrap();
    for (pgno, data) in pages {
        enc.encode_page(*pgno, data).unwrap();
    }
    enc.finish(post).unwrap()
}

fn snapshot_pages(n: u32) -> Vec<(u32, Vec<u8>)> {
    (1..=n).map(|p| (p, page(p, 3))).collect()
}

#[test]
fn a_snapshot_round_trips_through_the_streaming_decoder() {
    let pages = snapshot_pages(20);
    let out = encode(header(1, 1, 20), &pages, 0);
    assert_eq!(out.size, out.writer.len() as u64);
    assert_eq!(out.index.entries.len(), 20);

    let file = decode_file(&out.writer).unwrap();
    assert_eq!(file.header, out.header);
    assert_eq!(file.trailer, out.trailer);
    assert_eq!(file.pages, pages);
    assert_eq!(&out.writer[..4], b"LTX1");
    assert_eq!(out.trailer.file_checksum >> 63, 1);
}

#[test]
fn pages_decode_through_the_tail_alone_on_several_threads() {
    let pages: Vec<_> = [2u32, 5, 6, 9, 40]
        .iter()
        .map(|&p| (p, page(p, 7)))
        .collect();
    let out = encode(header(3, 8, 40), &pages, 0);
    let bytes = &out.writer;
    let size = bytes.len() as u64;

    // What a ranged reader does: the last bytes, then the tail it names.
    let last = &bytes[bytes.len() - 24..];
    let tail_len = tail_size(last, size).unwrap() as usize;
    let tail = decode_tail(&bytes[bytes.len() - tail_len..], size).unwrap();
    assert_eq!(tail.index, out.index);
    check_layout(&tail).unwrap();

    let entries = &tail.index.entries;
    let (a, b) = entries.split_at(2);
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = [a, b]
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    let mut got = Vec::new();
                    let crc = decode_frames(bytes, 0, PAGE, chunk, |p, d| {
                        got.push((p, d.to_vec()));
                        Ok(())
                    })
                    .unwrap();
                    (crc, got)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let crcs: Vec<_> = results.iter().map(|r| r.0).collect();
    let got: Vec<_> = results.into_iter().flat_map(|r| r.1).collect();
    assert_eq!(got, pages);
    verify_file_checksum(&bytes[..HEADER_SIZE], &crcs, &tail).unwrap();

    // One frame alone, from a buffer that starts at its offset.
    let e = tail.index.get(9).unwrap();
    let frame = &bytes[e.offset as usize..(e.offset + e.size) as usize];
    let mut one = Vec::new();
    decode_frames(frame, e.offset, PAGE, &[*e], |p, d| {
        one.push((p, d.to_vec()));
        Ok(())
    })
    .unwrap();
    assert_eq!(one, vec![(9, page(9, 7))]);

    // A wrong CRC for any part is caught.
    let mut wrong = crcs.clone();
    wrong.swap(0, 1);
    assert!(verify_file_checksum(&bytes[..HEADER_SIZE], &wrong, &tail).is_err());
}

#[test]
fn any_damaged_byte_fails_verification() {
    let out = encode(header(1, 1, 3), &snapshot_pages(3), 0);
    let good = out.writer;
    for i in (0..good.len()).step_by(7) {
        let mut bad = good.clone();
        bad[i] ^= 0x10;
        assert!(
            decode_file(&bad).is_err(),
            "byte {i} flipped went unnoticed"
        );
    }
    assert!(decode_file(&good[..good.len() - 1]).is_err());
}

#[test]
fn the_encoder_enforces_the_page_rules() {
    let p = page(1, 1);
    let mut enc = Encoder::new(Vec::new(), header(2, 2, 10)).unwrap();
    enc.encode_page(3, &p).unwrap();
    assert!(enc.encode_page(3, &p).is_err(), "a page twice");
    assert!(enc.encode_page(2, &p).is_err(), "out of order");
    assert!(enc.encode_page(11, &p).is_err(), "beyond the commit size");
    assert!(enc.encode_page(4, &p[..100]).is_err(), "a short page");

    let mut snap = Encoder::new(Vec::new(), header(1, 1, 3)).unwrap();
    assert!(
        snap.encode_page(2, &p).is_err(),
        "a snapshot starts at page 1"
    );
    snap.encode_page(1, &p).unwrap();
    assert!(snap.encode_page(3, &p).is_err(), "a snapshot skips nothing");
    snap.encode_page(2, &p).unwrap();
    assert!(snap.finish(0).is_err(), "a snapshot holds every page");

    let big = Header {
        page_size: 65536,
        ..header(2, 2, 20_000)
    };
    let mut enc = Encoder::new(Vec::new(), big).unwrap();
    assert!(
        enc.encode_page(lock_pgno(65536), &vec![0u8; 65536])
            .is_err(),
        "the lock page"
    );

    let no_sums = Encoder::new(Vec::new(), header(2, 2, 10)).unwrap();
    assert!(
        no_sums.finish(CHECKSUM_FLAG | 5).is_err(),
        "a checksum the flags say is absent"
    );
}

#[test]
fn tracked_checksums_are_written_and_checked() {
    let pages = snapshot_pages(5);
    let mut sum = DatabaseChecksum::new();
    for (p, d) in &pages {
        sum.toggle_page(*p, d);
    }
    let h = Header {
        flags: 0,
        ..header(1, 1, 5)
    };
    let out = encode(h, &pages, sum.value());
    assert_eq!(
        decode_file(&out.writer)
            .unwrap()
            .trailer
            .post_apply_checksum,
        sum.value()
    );

    let wrong = encode(h, &pages, sum.value() ^ 1);
    assert!(
        decode_file(&wrong.writer).is_err(),
        "a snapshot that does not sum to its trailer"
    );

    // An incremental file carries its pre-apply checksum in the header.
    let inc = Header {
        flags: 0,
        pre_apply_checksum: sum.value(),
        ..header(2, 2, 5)
    };
    let mut after = sum;
    after.toggle_page(2, &pages[1].1);
    after.toggle_page(2, &page(2, 9));
    let out = encode(inc, &[(2, page(2, 9))], after.value());
    let file = decode_file(&out.writer).unwrap();
    assert_eq!(file.header.pre_apply_checksum, sum.value());
    assert_eq!(file.trailer.post_apply_checksum, after.value());
}

/// Builds a file the way ltx 0.5.0/0.5.1 did: flag-0 page frames, each an
/// LZ4 frame; the checksum covers headers and decompressed pages only.
fn legacy_file(h: Header, pages: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut out = h.encode().to_vec();
    let mut crc = Crc64::new();
    crc.update(&out);
    let mut index = PageIndex::default();
    for (pgno, data) in pages {
        let offset = out.len() as u64;
        let ph = PageHeader {
            pgno: *pgno,
            flags: 0,
        }
        .encode();
        out.extend_from_slice(&ph);
        crc.update(&ph);
        crc.update(data);
        let info = lz4_flex::frame::FrameInfo::new().content_checksum(true);
        let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut out);
        enc.write_all(data).unwrap();
        enc.finish().unwrap();
        index.entries.push(IndexEntry {
            pgno: *pgno,
            offset,
            size: out.len() as u64 - offset,
        });
    }
    let mut tail = vec![0u8; PAGE_HEADER_SIZE];
    tail.extend(index.encode());
    tail.extend_from_slice(&0u64.to_be_bytes());
    crc.update(&tail);
    out.extend(tail);
    out.extend_from_slice(&(CHECKSUM_FLAG | crc.value()).to_be_bytes());
    out
}

#[test]
fn files_with_lz4_frame_pages_decode_both_ways() {
    let pages = snapshot_pages(4);
    let bytes = legacy_file(header(1, 1, 4), &pages);
    assert_eq!(decode_file(&bytes).unwrap().pages, pages);

    let tail = decode_tail(&bytes, bytes.len() as u64).unwrap();
    check_layout(&tail).unwrap();
    let mut got = Vec::new();
    let crc = decode_frames(&bytes, 0, PAGE, &tail.index.entries, |p, d| {
        got.push((p, d.to_vec()));
        Ok(())
    })
    .unwrap();
    assert_eq!(got, pages);
    verify_file_checksum(&bytes, &[crc], &tail).unwrap();
}
