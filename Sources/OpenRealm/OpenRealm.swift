import RealmStorage

/// Facts about the on-disk format this build reads and writes.
///
/// ```swift
/// print("reads and writes format version \(RealmFileFormat.version)")
/// ```
public enum RealmFileFormat {
    /// The newest file format version this build can open; newer files are refused with a
    /// clear error instead of being misread.
    public static var version: UInt32 { FileHeader.formatVersion }
}
