/// How a fill, resume or edit ended, as the command's exit status.
///
/// 0 submitted · 1 error (nothing changed) · 2 completion refused by validation (draft kept) ·
/// 3 kept as a draft (or an edited submission kept its edits) · 4 this sheet's changes discarded
/// (or there were none: a new record no longer exists, a resumed one is as it was).
public enum FillOutcome: Int32, Sendable, Hashable, CaseIterable {
    case submitted = 0
    case failed = 1
    case invalid = 2
    case kept = 3
    case discarded = 4

    /// The exit codes as `--help` lists them.
    public static let helpText = """
        Exit status: 0 submitted; 1 error (unknown form, field or record, unusable home, disk full — nothing saved was damaged); \
        2 --complete refused by validation (every field error listed, the draft kept); 3 kept as a draft (resume it later); \
        4 discarded (Cancel confirmed with --discard, or nothing was typed).
        """
}
