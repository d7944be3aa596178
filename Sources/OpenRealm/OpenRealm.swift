import RealmStorage

/// Facts about the on-disk format this build reads and writes.
///
/// The object layer (`Realm`, `Object`, `@Persisted`) is built on the storage engine in
/// `RealmStorage`; until it lands, this module only names the format.
public enum RealmFileFormat {
    /// The newest file format version this build can open; newer files are refused with a
    /// clear error instead of being misread.
    public static var version: UInt32 { FileHeader.formatVersion }
}
