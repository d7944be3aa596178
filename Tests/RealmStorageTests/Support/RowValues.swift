@testable import RealmStorage

extension ReadTransaction {
    /// Every row of the table named `name`, in key order, as its values (none when the table
    /// does not exist yet).
    func rowValues(ofTable name: String) throws -> [[Value]] {
        guard let view = try table(named: name) else { return [] }
        var rows: [[Value]] = []
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            rows.append(try row.values())
            return true
        }
        return rows
    }
}
