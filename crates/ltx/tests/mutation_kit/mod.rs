//! The damaged files' raw material for the mutation test: seeded sample
//! LTX files (block-encoded by the encoder, LZ4-frame encoded by hand),
//! the file taken apart into what its checksum covers so it can be put
//! back together wrongly under a correct checksum, and its byte regions.
//! It decodes nothing itself beyond finding a good file's frames.

use std::io::Write;

use offloop_ltx::*;

/// A small deterministic generator (xorshift64*): the same seed gives the
/// same mutants on every run.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Page contents of three kinds: runs that compress well, noise that does
/// not, and all zeros.
pub fn page(pgno: u32, page_size: u32, rng: &mut Rng) -> Vec<u8> {
    match pgno % 3 {
        0 => (0..page_size)
            .map(|i| ((i / 37) as u8).wrapping_add(pgno as u8))
            .collect(),
        1 => (0..page_size).map(|_| rng.next() as u8).collect(),
        _ => vec![0u8; page_size as usize],
    }
}

pub type Pages = Vec<(u32, Vec<u8>)>;

/// One sample file and what it holds.
pub struct Sample {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    pub header: Header,
    pub pages: Pages,
    /// Whether page frames are LZ4 frames (flag 0) rather than blocks.
    pub lz4_frames: bool,
}

pub fn header(page_size: u32, commit: u32, min: u64, max: u64, checksums: bool) -> Header {
    Header {
        flags: if checksums {
            0
        } else {
            HEADER_FLAG_NO_CHECKSUM
        },
        page_size,
        commit,
        min_txid: Txid::new(min).expect("a TXID is at least 1"),
        max_txid: Txid::new(max).expect("a TXID is at least 1"),
        timestamp: 1_764_500_000_000,
        ..Header::default()
    }
}

pub fn block_sample(name: &'static str, h: Header, pages: Pages) -> Sample {
    let mut enc = Encoder::new(Vec::new(), h).unwrap();
    let mut sum = DatabaseChecksum::new();
    for (pgno, data) in &pages {
        enc.encode_page(*pgno, data).unwrap();
        sum.toggle_page(*pgno, data);
    }
    let post = if h.has_checksums() { sum.value() } else { 0 };
    let bytes = enc.finish(post).unwrap().writer;
    Sample {
        name,
        bytes,
        header: h,
        pages,
        lz4_frames: false,
    }
}

/// A file as ltx 0.5.0/0.5.1 wrote it: each page an LZ4 frame, here with a
/// content checksum and, when `extras`, block checksums and the content
/// size too.
pub fn lz4_frame_sample(name: &'static str, h: Header, pages: Pages, extras: bool) -> Sample {
    let frames = pages
        .iter()
        .map(|(pgno, data)| {
            let mut payload = Vec::new();
            let info = lz4_flex::frame::FrameInfo::new()
                .content_checksum(true)
                .block_checksums(extras)
                .content_size(extras.then_some(data.len() as u64));
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, &mut payload);
            enc.write_all(data).unwrap();
            enc.finish().unwrap();
            Part {
                head: PageHeader {
                    pgno: *pgno,
                    flags: 0,
                }
                .encode()
                .to_vec(),
                prefix: Vec::new(),
                payload,
                page: data.clone(),
            }
        })
        .collect();
    let parts = Parts {
        header: h.encode().to_vec(),
        frames,
        post: 0,
    };
    Sample {
        name,
        bytes: parts.seal(&Seal::default()),
        header: h,
        pages,
        lz4_frames: true,
    }
}

pub fn samples() -> Vec<Sample> {
    let mut rng = Rng(0x0ff1_00f5_eed5_0001);
    let mut pages = |size: u32, pgnos: &[u32]| -> Pages {
        pgnos
            .iter()
            .map(|&p| (p, page(p, size, &mut rng)))
            .collect()
    };
    let snapshot: Vec<u32> = (1..=24).collect();
    vec![
        block_sample(
            "block snapshot",
            header(512, 24, 1, 3, false),
            pages(512, &snapshot),
        ),
        block_sample(
            "block delta",
            header(1024, 20, 5, 7, false),
            pages(1024, &[2, 3, 9, 17]),
        ),
        block_sample(
            "block snapshot with database checksums",
            header(512, 6, 1, 1, true),
            pages(512, &[1, 2, 3, 4, 5, 6]),
        ),
        lz4_frame_sample(
            "lz4-frame snapshot",
            header(512, 5, 1, 2, false),
            pages(512, &[1, 2, 3, 4, 5]),
            false,
        ),
        lz4_frame_sample(
            "lz4-frame delta with block checksums and content size",
            header(4096, 9, 3, 3, false),
            pages(4096, &[4, 7]),
            true,
        ),
    ]
}

/// A file taken apart: what its checksum covers of each frame is the page
/// header, the size prefix and the page decompressed.
#[derive(Clone)]
pub struct Parts {
    pub header: Vec<u8>,
    pub frames: Vec<Part>,
    pub post: u64,
}

#[derive(Clone)]
pub struct Part {
    pub head: Vec<u8>,
    pub prefix: Vec<u8>,
    pub payload: Vec<u8>,
    pub page: Vec<u8>,
}

/// How to put a file back together wrongly.
#[derive(Default)]
pub struct Seal {
    /// Index entries to write instead of the true ones.
    pub index: Option<Vec<IndexEntry>>,
    /// Bytes between the end marker and the index.
    pub junk: Vec<u8>,
}

impl Parts {
    pub fn of(s: &Sample) -> Parts {
        let b = &s.bytes;
        let tail = decode_tail(b, b.len() as u64).unwrap();
        let frames = tail
            .index
            .entries
            .iter()
            .zip(&s.pages)
            .map(|(e, (_, page))| {
                let f = &b[e.offset as usize..(e.offset + e.size) as usize];
                let prefix_len = if s.lz4_frames { 0 } else { 4 };
                Part {
                    head: f[..6].to_vec(),
                    prefix: f[6..6 + prefix_len].to_vec(),
                    payload: f[6 + prefix_len..].to_vec(),
                    page: page.clone(),
                }
            })
            .collect();
        Parts {
            header: b[..HEADER_SIZE].to_vec(),
            frames,
            post: tail.trailer.post_apply_checksum,
        }
    }

    /// The file, with a correct file checksum over whatever it holds.
    pub fn seal(&self, how: &Seal) -> Vec<u8> {
        let mut out = self.header.clone();
        let mut crc = Crc64::new();
        crc.update(&self.header);
        let mut entries = Vec::new();
        for f in &self.frames {
            let offset = out.len() as u64;
            out.extend_from_slice(&f.head);
            out.extend_from_slice(&f.prefix);
            out.extend_from_slice(&f.payload);
            crc.update(&f.head);
            crc.update(&f.prefix);
            crc.update(&f.page);
            let pgno = u32::from_be_bytes(f.head[..4].try_into().unwrap());
            entries.push(IndexEntry {
                pgno,
                offset,
                size: out.len() as u64 - offset,
            });
        }
        let mut tail = vec![0u8; PAGE_HEADER_SIZE];
        tail.extend_from_slice(&how.junk);
        tail.extend(
            PageIndex {
                entries: how.index.clone().unwrap_or(entries),
            }
            .encode(),
        );
        tail.extend_from_slice(&self.post.to_be_bytes());
        crc.update(&tail);
        out.extend(tail);
        out.extend_from_slice(&(CHECKSUM_FLAG | crc.value()).to_be_bytes());
        out
    }

    pub fn header_field(&mut self, at: usize, value: &[u8]) {
        self.header[at..at + value.len()].copy_from_slice(value);
    }
}

/// A byte range of a file and what it is, for naming mutants.
pub struct Region {
    pub name: String,
    pub range: std::ops::Range<usize>,
}

pub fn regions(s: &Sample) -> Vec<Region> {
    let b = &s.bytes;
    let n = b.len();
    let tail = decode_tail(b, n as u64).unwrap();
    let mut out = vec![Region {
        name: "header".into(),
        range: 0..HEADER_SIZE,
    }];
    for e in &tail.index.entries {
        let (o, end) = (e.offset as usize, (e.offset + e.size) as usize);
        out.push(Region {
            name: format!("page {} header", e.pgno),
            range: o..o + 6,
        });
        if s.lz4_frames {
            // Magic, FLG, BD, the content size when FLG says so, a checksum.
            let d = o + 6 + 7 + if b[o + 10] & 0x08 != 0 { 8 } else { 0 };
            out.push(Region {
                name: format!("page {} lz4 frame descriptor", e.pgno),
                range: o + 6..d,
            });
            out.push(Region {
                name: format!("page {} lz4 frame blocks", e.pgno),
                range: d..end,
            });
        } else {
            out.push(Region {
                name: format!("page {} size prefix", e.pgno),
                range: o + 6..o + 10,
            });
            out.push(Region {
                name: format!("page {} lz4 block", e.pgno),
                range: o + 10..end,
            });
        }
    }
    let pe = tail.pages_end as usize;
    for (name, range) in [
        ("end marker", pe..pe + 6),
        ("page index entries", pe + 6..n - 24),
        ("page index length", n - 24..n - 16),
        ("post-apply checksum", n - 16..n - 8),
        ("file checksum", n - 8..n),
    ] {
        out.push(Region {
            name: name.into(),
            range,
        });
    }
    out
}
