//! The restore plan: which LTX files, applied in order, rebuild the
//! database at a target, chosen as Litestream 0.5's `CalcRestorePlan`
//! chooses them. Pure arithmetic over listings, plus one call that lists a
//! store for it; it never reads a file's contents.
//!
//! The plan starts from the newest snapshot (L9) at or before the target,
//! then repeatedly takes, from levels 8 down to 0, the file that continues
//! the TXID range (`min ≤ current max + 1`) and reaches furthest (ties: the
//! smaller min, then the higher level, then the older file). A file the
//! chain cannot reach is a gap, and a gap is an error.

use crate::error::{Error, Result};
use offloop_ltx::Txid;

use crate::store::{LtxFile, Store, Timestamps, SNAPSHOT_LEVEL};

/// The point a restore rebuilds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// Everything the replica holds.
    #[default]
    Latest,
    /// Up to and including this TXID; it must end a file.
    Txid(Txid),
    /// The last state written strictly before this time (ms since epoch).
    Timestamp(i64),
}

impl Target {
    fn admits(&self, f: &LtxFile) -> bool {
        match *self {
            Target::Latest => true,
            Target::Txid(txid) => f.max_txid <= txid,
            Target::Timestamp(ms) => f.timestamp_ms < ms,
        }
    }
}

/// Lists every level of `store` at once (with LTX timestamps when the
/// target is a time) and plans the restore.
pub fn plan_restore(store: &dyn Store, target: Target) -> Result<Vec<LtxFile>> {
    let timestamps = match target {
        Target::Timestamp(_) => Timestamps::Ltx,
        Target::Latest | Target::Txid(_) => Timestamps::Listed,
    };
    let levels = store.list_all(timestamps)?;
    restore_plan(&levels, target)
}

/// Plans a restore from listings, `levels[n]` holding level n's files.
pub fn restore_plan(levels: &[Vec<LtxFile>], target: Target) -> Result<Vec<LtxFile>> {
    let snapshot_level = usize::from(SNAPSHOT_LEVEL);
    let mut plan: Vec<LtxFile> = Vec::new();
    let snapshot = levels
        .get(snapshot_level)
        .into_iter()
        .flatten()
        // A snapshot holds every page from TXID 1; an L9 name that does
        // not start there is no snapshot (a restore from it would lack
        // what came before).
        .filter(|f| f.is_full() && target.admits(f))
        .max_by_key(|f| (f.max_txid, std::cmp::Reverse(f.min_txid)));
    plan.extend(snapshot);

    let lower: Vec<&LtxFile> = levels
        .iter()
        .take(snapshot_level)
        .flatten()
        .filter(|f| target.admits(f))
        .collect();
    // The TXID the plan has reached; `None` before any file.
    let mut current: Option<Txid> = snapshot.map(|s| s.max_txid);
    let following = |current: Option<Txid>| current.map_or(Txid::FIRST, Txid::next);
    let reached = |current: Option<Txid>| matches!(target, Target::Txid(t) if current >= Some(t));
    while !reached(current) {
        let next = lower
            .iter()
            .filter(|f| f.min_txid <= following(current) && Some(f.max_txid) > current)
            .copied()
            .reduce(|best, f| if better(best, f) { f } else { best });
        let Some(next) = next else { break };
        plan.push(*next);
        current = Some(next.max_txid);
    }

    let Some(last) = plan.last() else {
        return Err(Error::Plan(match target {
            Target::Latest => "the replica holds no LTX files".into(),
            _ => format!("the replica holds nothing at or before {target:?}"),
        }));
    };
    if let Target::Txid(txid) = target {
        if last.max_txid != txid {
            return Err(Error::Plan(format!(
                "TXID {txid} is not available: the replica reaches {} without a file ending there",
                last.max_txid
            )));
        }
    }
    if let Some(beyond) = lower.iter().find(|f| f.min_txid > following(current)) {
        let reached = current.map_or_else(|| "nothing".into(), |t| format!("TXID {t}"));
        return Err(Error::Plan(format!(
            "gap in the replica: it reaches {reached}, the next file ({} at level {}) starts at {}",
            beyond.name(),
            beyond.level,
            beyond.min_txid
        )));
    }
    Ok(plan)
}

/// Whether `next` continues the plan better than `best`.
fn better(best: &LtxFile, next: &LtxFile) -> bool {
    (
        next.max_txid,
        std::cmp::Reverse(next.min_txid),
        next.level,
        std::cmp::Reverse(next.timestamp_ms),
    ) > (
        best.max_txid,
        std::cmp::Reverse(best.min_txid),
        best.level,
        std::cmp::Reverse(best.timestamp_ms),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(n: u64) -> Txid {
        Txid::new(n).unwrap()
    }

    fn f(level: u8, min: u64, max: u64) -> LtxFile {
        LtxFile {
            level,
            min_txid: t(min),
            max_txid: t(max),
            size: 1000,
            // One second per TXID: the file was written when its range ended.
            timestamp_ms: max as i64 * 1000,
        }
    }

    fn levels(files: &[LtxFile]) -> Vec<Vec<LtxFile>> {
        let mut out = vec![Vec::new(); 10];
        for file in files {
            out[file.level as usize].push(*file);
        }
        out
    }

    fn names(plan: &[LtxFile]) -> Vec<(u8, u64, u64)> {
        plan.iter()
            .map(|f| (f.level, f.min_txid.get(), f.max_txid.get()))
            .collect()
    }

    /// A replica as Litestream leaves it: a snapshot at 5, L1 compactions,
    /// L0 files for every TXID since.
    fn replica() -> Vec<Vec<LtxFile>> {
        let mut files = vec![f(9, 1, 5), f(1, 1, 3), f(1, 4, 6), f(1, 7, 8)];
        files.extend((1..=10).map(|t| f(0, t, t)));
        levels(&files)
    }

    #[test]
    fn the_latest_plan_starts_at_the_newest_snapshot_and_takes_the_longest_steps() {
        let plan = restore_plan(&replica(), Target::Latest).unwrap();
        assert_eq!(
            names(&plan),
            vec![(9, 1, 5), (1, 4, 6), (1, 7, 8), (0, 9, 9), (0, 10, 10)]
        );
    }

    #[test]
    fn a_txid_plan_stops_at_that_txid_and_only_at_a_file_boundary() {
        let plan = restore_plan(&replica(), Target::Txid(t(7))).unwrap();
        assert_eq!(names(&plan), vec![(9, 1, 5), (1, 4, 6), (0, 7, 7)]);
        let plan = restore_plan(&replica(), Target::Txid(t(5))).unwrap();
        assert_eq!(names(&plan), vec![(9, 1, 5)]);
        let plan = restore_plan(&replica(), Target::Txid(t(2))).unwrap();
        assert_eq!(
            names(&plan),
            vec![(0, 1, 1), (0, 2, 2)],
            "no snapshot that early"
        );

        let coarse = levels(&[f(9, 1, 5), f(1, 6, 9)]);
        let e = restore_plan(&coarse, Target::Txid(t(7)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not available"), "{e}");
        let e = restore_plan(&replica(), Target::Txid(t(11)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not available"), "{e}");
    }

    #[test]
    fn a_timestamp_plan_takes_only_files_written_before_it() {
        let plan = restore_plan(&replica(), Target::Timestamp(7_500)).unwrap();
        assert_eq!(names(&plan), vec![(9, 1, 5), (1, 4, 6), (0, 7, 7)]);
        let plan = restore_plan(&replica(), Target::Timestamp(7_000)).unwrap();
        assert_eq!(names(&plan), vec![(9, 1, 5), (1, 4, 6)], "strictly before");
        let e = restore_plan(&replica(), Target::Timestamp(500))
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing at or before"), "{e}");
    }

    #[test]
    fn ties_go_to_the_smaller_min_then_the_higher_level() {
        let plan = restore_plan(
            &levels(&[f(0, 1, 4), f(2, 2, 4), f(1, 1, 4)]),
            Target::Latest,
        )
        .unwrap();
        assert_eq!(names(&plan), vec![(1, 1, 4)]);
        let plan = restore_plan(
            &levels(&[f(0, 1, 2), f(3, 2, 4), f(1, 1, 4)]),
            Target::Latest,
        )
        .unwrap();
        assert_eq!(names(&plan), vec![(1, 1, 4)]);
    }

    #[test]
    fn a_gap_is_an_error() {
        let gappy = levels(&[f(9, 1, 5), f(0, 6, 6), f(0, 8, 8)]);
        let e = restore_plan(&gappy, Target::Latest)
            .unwrap_err()
            .to_string();
        assert!(e.contains("gap"), "{e}");
        let e = restore_plan(&gappy, Target::Txid(t(8)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("not available"), "{e}");
        let e = restore_plan(&gappy, Target::Timestamp(9_000))
            .unwrap_err()
            .to_string();
        assert!(e.contains("gap"), "{e}");
        // Before the gap, the replica is whole.
        let plan = restore_plan(&gappy, Target::Txid(t(6))).unwrap();
        assert_eq!(names(&plan), vec![(9, 1, 5), (0, 6, 6)]);
    }

    #[test]
    fn an_empty_replica_has_no_plan() {
        let e = restore_plan(&levels(&[]), Target::Latest)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no LTX files"), "{e}");
    }

    #[test]
    fn without_a_snapshot_the_plan_starts_at_txid_one() {
        let plan = restore_plan(&levels(&[f(0, 1, 1), f(0, 2, 2)]), Target::Latest).unwrap();
        assert_eq!(names(&plan), vec![(0, 1, 1), (0, 2, 2)]);
    }

    /// A small deterministic generator (xorshift64*), so a failure repeats.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        }
    }

    #[test]
    fn any_listing_plans_a_chain_from_txid_one_or_refuses() {
        let mut rng = Rng(0x0ff1_00f9_1a45_eed5);
        let (mut planned, mut refused) = (0, 0);
        for _ in 0..20_000 {
            let mut files = Vec::new();
            for _ in 0..rng.below(14) {
                let level = [0, 0, 0, 1, 2, 3, 8, 9][rng.below(8) as usize];
                // Some names are nonsense on purpose: L9 files not from 1,
                // ranges ending before they start.
                let min = if level == 9 && rng.below(4) > 0 {
                    1
                } else {
                    1 + rng.below(30)
                };
                let max = if rng.below(20) == 0 {
                    1 + rng.below(min)
                } else {
                    min + rng.below(10)
                };
                files.push(f(level, min, max));
            }
            let target = match rng.below(3) {
                0 => Target::Latest,
                1 => Target::Txid(t(1 + rng.below(45))),
                _ => Target::Timestamp(rng.below(45_000) as i64),
            };
            let Ok(plan) = restore_plan(&levels(&files), target) else {
                refused += 1;
                continue;
            };
            planned += 1;
            let why = format!(
                "{target:?} over {:?} gave {:?}",
                names(&files),
                names(&plan)
            );
            assert_eq!(plan[0].min_txid, Txid::FIRST, "{why}");
            for pair in plan.windows(2) {
                assert!(pair[1].min_txid <= pair[0].max_txid.next(), "{why}");
                assert!(pair[1].max_txid > pair[0].max_txid, "{why}");
            }
            assert!(plan.iter().all(|f| target.admits(f)), "{why}");
            let reached = plan[plan.len() - 1].max_txid;
            if let Target::Txid(txid) = target {
                assert_eq!(reached, txid, "{why}");
            } else {
                let left = files
                    .iter()
                    .filter(|f| f.level < SNAPSHOT_LEVEL && target.admits(f))
                    .any(|f| f.min_txid <= reached.next() && f.max_txid > reached);
                assert!(!left, "a file would have gone further: {why}");
            }
        }
        assert!(
            planned > 1_000 && refused > 1_000,
            "{planned} planned, {refused} refused"
        );
    }
}
