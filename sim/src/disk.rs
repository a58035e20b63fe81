//! The fake disk: an append-only file with an explicit durability boundary.
//!
//! Guarantee: bytes survive a crash only if they were synced, or if they are a prefix
//! of the unsynced tail that the crash chose to keep (a torn write). Nothing past the
//! kept prefix survives, and nothing synced is ever lost or reordered. That is the
//! weakest promise an append-only log on a real file system can count on, so an engine
//! that recovers from every crash this disk can produce recovers from a real one.
//!
//! Why the caller picks how much of the tail survives: the amount is a decision of
//! the run (drawn through the `Decider`), which keeps crashes replayable and lets the
//! shrinker lower a torn write to "nothing unsynced survived".

/// An in-memory append-only file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FakeDisk {
    synced: Vec<u8>,
    unsynced: Vec<u8>,
    appends: u64,
    syncs: u64,
}

impl FakeDisk {
    /// An empty disk. (The world's disk starts with room: [`FakeDisk::with_room`].)
    #[cfg(test)]
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty disk with room for `bytes` durable bytes before its buffer must grow:
    /// a run's log grows record by record, and each doubling of a buffer that started
    /// empty copied the whole log so far.
    pub fn with_room(bytes: usize) -> Self {
        FakeDisk {
            synced: Vec::with_capacity(bytes),
            ..Self::default()
        }
    }

    /// Buffers `bytes` after everything written so far; not durable until `sync`.
    pub fn append(&mut self, bytes: &[u8]) {
        self.unsynced.extend_from_slice(bytes);
        self.appends += 1;
    }

    /// `append` then `sync` in one: the same disk after, without
    /// copying `bytes` through the unsynced buffer first (every record the engine
    /// persists takes this path, so it is a copy of the whole log per run saved).
    pub fn append_synced(&mut self, bytes: &[u8]) {
        self.synced.append(&mut self.unsynced);
        self.synced.extend_from_slice(bytes);
        self.appends += 1;
        self.syncs += 1;
    }

    /// Makes everything appended so far durable. (The world persists through
    /// `append_synced`; the tests spell the two steps out.)
    #[cfg(test)]
    pub fn sync(&mut self) {
        self.synced.append(&mut self.unsynced);
        self.syncs += 1;
    }

    /// The bytes that would survive a crash that keeps none of the unsynced tail.
    pub fn durable(&self) -> &[u8] {
        &self.synced
    }

    /// What a live reader sees: the durable bytes followed by the buffered ones.
    #[cfg(test)]
    pub fn contents(&self) -> Vec<u8> {
        let mut all = Vec::with_capacity(self.len());
        all.extend_from_slice(&self.synced);
        all.extend_from_slice(&self.unsynced);
        all
    }

    /// Bytes appended but not yet synced: the most a crash can keep of the tail.
    #[cfg(test)]
    pub fn unsynced_len(&self) -> usize {
        self.unsynced.len()
    }

    /// Loses power. Keeps the synced bytes plus at most the first `keep_of_unsynced`
    /// bytes of the unsynced tail, which become the new durable state, and returns
    /// that state (what recovery will read), borrowed: a copy of the whole log per
    /// crash is for a caller that keeps it.
    pub fn crash(&mut self, keep_of_unsynced: usize) -> &[u8] {
        let keep = keep_of_unsynced.min(self.unsynced.len());
        self.synced.extend_from_slice(&self.unsynced[..keep]);
        self.unsynced.clear();
        &self.synced
    }

    /// Cuts the log to `len` bytes, as a runtime does to a torn tail it found on
    /// restart; durable at once (a truncate is followed by a sync).
    pub fn truncate(&mut self, len: usize) {
        let mut all = std::mem::take(&mut self.synced);
        all.extend_from_slice(&self.unsynced);
        all.truncate(len);
        self.synced = all;
        self.unsynced.clear();
    }

    /// Length of `contents()`.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.synced.len() + self.unsynced.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Calls to `append` so far, crashes included.
    #[cfg(test)]
    pub fn appends(&self) -> u64 {
        self.appends
    }

    /// Calls to `sync` so far, crashes included.
    #[cfg(test)]
    pub fn syncs(&self) -> u64 {
        self.syncs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_synced_leaves_the_disk_append_then_sync_leaves() {
        for torn in [&b""[..], b"tail"] {
            let (mut a, mut b) = (FakeDisk::new(), FakeDisk::new());
            for d in [&mut a, &mut b] {
                d.append(b"first");
                d.sync();
                d.append(torn);
            }
            a.append(b"record");
            a.sync();
            b.append_synced(b"record");
            assert_eq!(a, b);
            assert_eq!(b.durable(), [&b"first"[..], torn, b"record"].concat());
            assert_eq!((b.appends(), b.syncs()), (3, 2));
        }
    }

    #[test]
    fn appended_bytes_are_visible_but_not_durable_until_synced() {
        let mut d = FakeDisk::new();
        d.append(b"abc");
        assert_eq!(d.contents(), b"abc");
        assert_eq!(d.durable(), b"");
        assert_eq!(d.unsynced_len(), 3);
        d.sync();
        assert_eq!(d.durable(), b"abc");
        assert_eq!(d.unsynced_len(), 0);
        assert_eq!(d.contents(), b"abc");
    }

    #[test]
    fn contents_is_durable_followed_by_buffered() {
        let mut d = FakeDisk::new();
        d.append(b"one ");
        d.sync();
        d.append(b"two ");
        d.append(b"three");
        assert_eq!(d.durable(), b"one ");
        assert_eq!(d.contents(), b"one two three");
        assert_eq!(d.len(), 13);
    }

    #[test]
    fn a_crash_keeping_nothing_loses_exactly_the_unsynced_tail() {
        let mut d = FakeDisk::new();
        d.append(b"keep");
        d.sync();
        d.append(b"lose");
        assert_eq!(d.crash(0), b"keep");
        assert_eq!(d.durable(), b"keep");
        assert_eq!(d.contents(), b"keep");
    }

    #[test]
    fn a_torn_write_keeps_a_prefix_of_the_unsynced_tail_and_makes_it_durable() {
        let mut d = FakeDisk::new();
        d.append(b"AAAA");
        d.sync();
        d.append(b"BBBB");
        d.append(b"CCCC");
        assert_eq!(d.crash(6), b"AAAABBBBCC");
        assert_eq!(d.durable(), b"AAAABBBBCC");
        assert_eq!(d.unsynced_len(), 0);
        // The kept bytes stay durable through a second crash.
        d.append(b"DD");
        assert_eq!(d.crash(0), b"AAAABBBBCC");
    }

    #[test]
    fn a_crash_keeping_more_than_the_tail_keeps_the_whole_tail() {
        let mut d = FakeDisk::new();
        d.append(b"xy");
        assert_eq!(d.crash(usize::MAX), b"xy");
        assert_eq!(d.contents(), b"xy");
    }

    #[test]
    fn writes_after_a_crash_append_to_the_survivors() {
        let mut d = FakeDisk::new();
        d.append(b"12345");
        d.crash(2);
        d.append(b"ab");
        assert_eq!(d.contents(), b"12ab");
        assert_eq!(d.durable(), b"12");
    }

    #[test]
    fn len_and_is_empty_count_buffered_bytes() {
        let mut d = FakeDisk::new();
        assert!(d.is_empty());
        assert_eq!(d.len(), 0);
        d.append(b"");
        assert!(d.is_empty());
        d.append(b"q");
        assert!(!d.is_empty());
        assert_eq!(d.len(), 1);
    }

    #[test]
    fn appends_and_syncs_count_calls_and_survive_crashes() {
        let mut d = FakeDisk::new();
        d.append(b"a");
        d.append(b"");
        d.sync();
        d.sync();
        d.sync();
        d.crash(0);
        d.append(b"b");
        assert_eq!(d.appends(), 3);
        assert_eq!(d.syncs(), 3);
    }
}
