import Testing
import OpenRealm

@Suite struct FormatTests {
    @Test func publishesTheFormatVersion() {
        #expect(RealmFileFormat.version >= 1)
    }
}
