import Foundation
import OpenRealm
import Testing

/// Object notifications: the properties they report, with old and new values.
@Suite struct ObjectNotificationTests {
    /// Observes `object`: there is no initial call.
    private func observed<T: Object>(_ object: T, keyPaths: [String]? = nil, in realm: Realm) -> (NotificationToken, Recorder<ObjectEvent>) {
        let events = Recorder<ObjectEvent>()
        let token = object.observe(keyPaths: keyPaths) { events.record(ObjectEvent($0)) }
        realm.refresh()
        #expect(events.take().isEmpty)
        return (token, events)
    }

    @Test func aChangeReportsThePropertiesWithTheirOldAndNewValues() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let (token, events) = observed(chore, in: realm)
        try realm.commitAndDeliver {
            chore.title = "sweep"
            chore.rank = 5
        }
        #expect(events.take() == [.changed(("title", "c1", "sweep"), ("rank", "1", "5"))])
        // The object handed to the block is the observed one, as it is now.
        var seen: [String] = []
        let second = chore.observe { change in
            if case .change(let object, _) = change { seen.append(object.title) }
        }
        try realm.commitAndDeliver { chore.title = "mop" }
        #expect(seen == ["mop"])
        withExtendedLifetime((token, second)) {}
        try RoundTripTests.verify(folder)
    }

    @Test func severalCommitsReportTheFirstOldAndTheLastNewValue() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let chore = try realm.addChores([1])[0]
        let (token, events) = observed(chore, in: realm)
        for rank in 2...10 {
            writeOnAnotherThread(configuration) { $0.object(ofType: Chore.self, forPrimaryKey: 1)!.rank = rank }
        }
        realm.refresh()
        #expect(events.take() == [.changed(("rank", "1", "10"))])
        withExtendedLifetime(token) {}
    }

    @Test func aDeletedObjectReportsDeletedOnce() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let (token, events) = observed(chore, in: realm)
        try realm.commitAndDeliver { realm.delete(chore) }
        #expect(events.take() == [.deleted])
        // Another object under the same primary key is not the one observed.
        try realm.addChores([1])
        realm.refresh()
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func otherObjectsOfTheClassAreNotReported() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1, 2])
        let (token, events) = observed(chores[0], in: realm)
        try realm.commitAndDeliver { chores[1].title = "other" }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func keyPathsLimitTheWatchedProperties() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let (token, events) = observed(chore, keyPaths: ["done"], in: realm)
        try realm.commitAndDeliver { chore.title = "ignored" }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver {
            chore.title = "still ignored"
            chore.done = true
        }
        #expect(events.take() == [.changed(("done", "false", "true"))])
        withExtendedLifetime(token) {}
    }

    @Test func swiftKeyPathsNameTheProperties() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let events = Recorder<ObjectEvent>()
        let token = chore.observe(keyPaths: [\Chore.title]) { events.record(ObjectEvent($0)) }
        try realm.commitAndDeliver {
            chore.rank = 3
            chore.title = "dust"
        }
        #expect(events.take() == [.changed(("title", "c1", "dust"))])
        withExtendedLifetime(token) {}
    }

    @Test func swiftKeyPathsGoOnThroughToOneLinks() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        try realm.write { chore.badge = Badge(value: ["label": "gold"]) }
        let events = Recorder<[String]>()
        let token = chore.observe(keyPaths: [\.badge?.label, \.rank]) { change in
            if case .change(_, let properties) = change { events.record(properties.map(\.name)) }
        }
        try realm.commitAndDeliver { chore.badge!.level = 2 }
        try realm.commitAndDeliver { chore.badge!.label = "silver" }
        try realm.commitAndDeliver { chore.rank = 4 }
        #expect(events.take() == [["badge"], ["rank"]])
        withExtendedLifetime(token) {}
    }

    @Test func aKeyPathTwoLinksLongWatchesTheLastObjectThoughTheOneBetweenDidNotChange() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(watchedModelTypes))
        let item = try realm.write {
            realm.create(WatchedItem.self, value: ["id": 1, "keeper": ["id": 1, "pet": ["name": "rex", "age": 3]]])
        }
        let (token, events) = observed(item, keyPaths: ["keeper.pet.age"], in: realm)
        try realm.commitAndDeliver { item.keeper!.pet!.name = "not watched" }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { item.keeper!.pet!.age = 4 }
        let heard = events.take()
        #expect(heard.count == 1)
        if case .change(let properties) = heard.first { #expect(properties.map(\.name) == ["keeper"]) }
        withExtendedLifetime(token) {}
    }

    @Test func linkedObjectsAreWatchedOnlyThroughKeyPaths() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        try realm.write { chore.badge = Badge(value: ["label": "gold"]) }
        let (shallowToken, shallow) = observed(chore, in: realm)
        let (deepToken, deep) = observed(chore, keyPaths: ["badge.label"], in: realm)
        try realm.commitAndDeliver { chore.badge!.label = "silver" }
        // Object notifications are shallow by default (as in Realm).
        #expect(shallow.take().isEmpty)
        // Through a key path, the change is the link property's.
        let heard = deep.take()
        #expect(heard.count == 1)
        if case .change(let properties) = heard.first {
            #expect(properties.map(\.name) == ["badge"])
        }
        try realm.commitAndDeliver { chore.badge!.level = 4 }
        #expect(deep.take().isEmpty)
        withExtendedLifetime((shallowToken, deepToken)) {}
    }

    @Test func aChangeInsideAnEmbeddedObjectIsAChangeOfItsProperty() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let contact = try realm.write { realm.create(Contact.self, value: ["name": "Ann", "home": ["street": "Elm"]]) }
        let (token, events) = observed(contact, in: realm)
        try realm.commitAndDeliver { contact.home!.street = "Oak" }
        let heard = events.take()
        #expect(heard.count == 1)
        if case .change(let properties) = heard.first { #expect(properties.map(\.name) == ["home"]) }
        withExtendedLifetime(token) {}
    }

    @Test func aLinkChangeReportsTheObjectsLinked() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let events = Recorder<(String, String?, String?)>()
        let token = chore.observe { change in
            guard case .change(_, let properties) = change, let property = properties.first else { return }
            events.record((property.name, (property.oldValue as? Badge)?.label, (property.newValue as? Badge)?.label))
        }
        try realm.commitAndDeliver { chore.badge = Badge(value: ["label": "gold"]) }
        let heard = events.take()
        #expect(heard.count == 1)
        #expect(heard.first?.0 == "badge")
        #expect(heard.first?.1 == nil)
        #expect(heard.first?.2 == "gold")
        withExtendedLifetime(token) {}
    }

    @Test func aCollectionPropertyChangeCarriesNoValues() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let roster = try realm.write { realm.create(Roster.self) }
        let (token, events) = observed(roster, in: realm)
        try realm.commitAndDeliver { roster.numbers.append(1) }
        #expect(events.take() == [.changed(("numbers", "nil", "nil"))])
        try realm.commitAndDeliver { roster.scores["a"] = 1 }
        #expect(events.take() == [.changed(("scores", "nil", "nil"))])
        // A property named `changes` is an ordinary property.
        try realm.commitAndDeliver { roster.changes = 2 }
        #expect(events.take() == [.changed(("changes", "0", "2"))])
        withExtendedLifetime(token) {}
    }

    @Test func settingAnEqualValueIsNoChange() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1, 2])
        let (token, events) = observed(chores[0], in: realm)
        // Unlike Realm: the file is not written, so nothing changed. Nor does another
        // object's change of the same column count for this one.
        try realm.commitAndDeliver {
            chores[0].title = chores[0].title
            chores[0].rank = 7
            chores[1].title = "other"
        }
        #expect(events.take() == [.changed(("rank", "1", "7"))])
        withExtendedLifetime(token) {}
    }

    @Test func optionalValuesAreNilOrTheValue() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let (token, events) = observed(dog, in: realm)
        try realm.commitAndDeliver { dog.breed = "Collie" }
        #expect(events.take() == [.changed(("breed", "nil", "Collie"))])
        withExtendedLifetime(token) {}
    }

    @Test func writeWithoutNotifyingSkipsAnObjectObservation() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let (token, events) = observed(chore, in: realm)
        try realm.write(withoutNotifying: [token]) { chore.rank = 2 }
        realm.refresh()
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { chore.rank = 3 }
        #expect(events.take() == [.changed(("rank", "2", "3"))])
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func observeOnAnActorDeliversACopyThere() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let mailbox = Mailbox<ObjectEvent>()
        let token = await chore.observe(on: CollectionNotificationTests.Watcher()) { _, change in mailbox.put(ObjectEvent(change)) }
        try realm.write { chore.title = "away" }
        #expect(await mailbox.next() == .changed(("title", "c1", "away")))
        try realm.write { realm.delete(chore) }
        #expect(await mailbox.next() == .deleted)
        token.invalidate()
    }
}
