import Foundation
import Testing
@testable import OpenRealm

/// A value `Mirror` does not show (it cannot copy it): a layout derived from `Mirror` could not
/// be confirmed for a class that stores one; the field metadata gives it all the same.
struct Unreflected: ~Copyable {
    var bits: (Int, Int, Int) = (1, 2, 3)
}

final class Jotting: Object {
    @Persisted(primaryKey: true) var id = 0
    var scratch = Unreflected()
    @Persisted var title = ""
    @Persisted var words = 0
    @Persisted var tag: String?
}

/// A class with a field `Mirror` cannot show has its wrapper layout from the field metadata,
/// and its managed accessors find their properties from their wrappers' offsets.
@Suite struct UnconfirmedLayoutTests {
    @Test func accessorsFindTheirPropertiesWithoutALayout() throws {
        #expect(try ObjectSchema.of(Jotting.self).wrapperLayout?.count == 4)
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration([Jotting.self]))
            try realm.write {
                for id in 0..<20 {
                    let jotting = Jotting()
                    jotting.id = id
                    jotting.title = "title \(id)"
                    jotting.words = id * 10
                    realm.add(jotting)
                    jotting.tag = id % 2 == 0 ? "even" : nil
                    jotting.words += 1
                }
            }
            let seven = try #require(realm.object(ofType: Jotting.self, forPrimaryKey: 7))
            #expect(seven.tag == nil && seven.words == 71 && seven.title == "title 7" && seven.id == 7)
            try realm.write { seven.title = "renamed" }
        }
        let realm = try Realm(configuration: folder.configuration([Jotting.self]))
        for id in 0..<20 {
            let jotting = try #require(realm.object(ofType: Jotting.self, forPrimaryKey: id))
            #expect(jotting.title == (id == 7 ? "renamed" : "title \(id)"))
            #expect(jotting.words == id * 10 + 1)
            #expect(jotting.tag == (id % 2 == 0 ? "even" : nil))
        }
    }
}
