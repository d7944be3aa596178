import Foundation
import OpenRealm
import Testing

/// Collection notifications: the positions they report, for each kind of collection.
///
/// Most tests use a realm on the test's thread: it delivers when it refreshes (or begins a
/// write), which makes every delivery point explicit.
@Suite struct CollectionNotificationTests {
    /// Observes `collection` and takes the initial change.
    private func observed<C: RealmObservableCollection>(_ collection: C, keyPaths: [String]? = nil, in realm: Realm)
        -> (NotificationToken, Recorder<CollectionEvent>) where C.CollectionChange == RealmCollectionChange<C> {
        let events = Recorder<CollectionEvent>()
        let token = collection.observe(keyPaths: keyPaths) { events.record(CollectionEvent($0)) }
        realm.refresh()
        #expect(events.take() == [.initial])
        return (token, events)
    }

    @Test func resultsReportInsertionsDeletionsAndModifications() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2, 3])
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        try realm.commitAndDeliver {
            realm.delete(realm.chore(2))
            realm.create(Chore.self, value: ["id": 4])
            realm.chore(3).title = "changed"
        }
        #expect(events.take() == [.update(deletions: [1], insertions: [2], modifications: [1])])
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    @Test func ownCommitsReachObserversOnAThreadAtTheNextRefresh() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let events = Recorder<CollectionEvent>()
        let token = realm.objects(Chore.self).observe { events.record(CollectionEvent($0)) }
        // No event loop on a plain thread: even the initial change waits for the realm to move.
        #expect(events.take().isEmpty)
        realm.refresh()
        #expect(events.take() == [.initial])
        try realm.addChores([1])
        #expect(events.take().isEmpty)
        realm.refresh()
        #expect(events.take() == [.update(insertions: [0])])
        try realm.addChores([2])
        // A write beginning delivers too.
        try realm.write {
            #expect(events.take() == [.update(insertions: [1])])
        }
        withExtendedLifetime(token) {}
    }

    @Test func aSortedResultsReportsAMoveAsADeletionAndAnInsertion() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2, 3, 4])
        let sorted = realm.objects(Chore.self).sorted(byKeyPath: "rank")
        let (token, events) = observed(sorted, in: realm)
        try realm.commitAndDeliver {
            realm.chore(1).rank = 10
            realm.chore(3).title = "changed"
        }
        // [1, 2, 3, 4] → [2, 3, 4, 1]: chore 1 moved to the end; chore 3 modified in place.
        #expect(events.take() == [.update(deletions: [0], insertions: [3], modifications: [1])])
        #expect(sorted.map(\.id) == [2, 3, 4, 1])
        withExtendedLifetime(token) {}
    }

    @Test func aFilteredResultsReportsObjectsLeavingAndEnteringTheFilter() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2, 3])
        let open = realm.objects(Chore.self).filter("done == false")
        let (token, events) = observed(open, in: realm)
        try realm.commitAndDeliver { realm.chore(2).done = true }
        #expect(events.take() == [.update(deletions: [1])])
        try realm.commitAndDeliver {
            realm.chore(2).done = false
            realm.chore(3).done = true
        }
        // [1, 3] → [1, 2]
        #expect(events.take() == [.update(deletions: [1], insertions: [1])])
        withExtendedLifetime(token) {}
    }

    @Test func resultsOfAClassWithoutATableSeeItsFirstObjects() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let (token, events) = observed(realm.objects(Badge.self), in: realm)
        writeOnAnotherThread(configuration) { $0.create(Badge.self, value: ["label": "first"]) }
        realm.refresh()
        #expect(events.take() == [.update(insertions: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func changesToOtherTablesAreNotReported() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        try realm.commitAndDeliver { realm.add(Dog()) }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func aChangeToALinkedObjectIsAModification() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2])
        try realm.write { realm.chore(2).badge = Badge(value: ["label": "gold"]) }
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        try realm.commitAndDeliver { realm.chore(2).badge!.level = 3 }
        #expect(events.take() == [.update(modifications: [1])])
        withExtendedLifetime(token) {}
    }

    @Test func keyPathsLimitWhichChangesAreModifications() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2])
        let (token, events) = observed(realm.objects(Chore.self), keyPaths: ["title"], in: realm)
        try realm.commitAndDeliver { realm.chore(1).rank = 7 }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { realm.chore(2).title = "renamed" }
        #expect(events.take() == [.update(modifications: [1])])
        // Insertions and deletions are always reported.
        try realm.addChores([3])
        realm.refresh()
        #expect(events.take() == [.update(insertions: [2])])
        withExtendedLifetime(token) {}
    }

    @Test func keyPathsThroughALinkWatchTheLinkedProperty() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        try realm.write { realm.chore(1).badge = Badge(value: ["label": "gold"]) }
        let (token, events) = observed(realm.objects(Chore.self), keyPaths: ["badge.label"], in: realm)
        try realm.commitAndDeliver { realm.chore(1).badge!.level = 2 }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { realm.chore(1).badge!.label = "silver" }
        #expect(events.take() == [.update(modifications: [0])])
        // The link itself is on the path.
        try realm.commitAndDeliver { realm.chore(1).badge = nil }
        #expect(events.take() == [.update(modifications: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func aLinkAndAPathThroughItWatchBothInEitherOrder() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        try realm.write { realm.chore(1).badge = Badge(value: ["label": "gold"]) }
        let (first, linkFirst) = observed(realm.objects(Chore.self), keyPaths: ["badge", "badge.label"], in: realm)
        let (second, pathFirst) = observed(realm.objects(Chore.self), keyPaths: ["badge.label", "badge"], in: realm)
        try realm.commitAndDeliver { realm.chore(1).badge!.label = "silver" }
        #expect(linkFirst.take() == [.update(modifications: [0])])
        #expect(pathFirst.take() == [.update(modifications: [0])])
        withExtendedLifetime((first, second)) {}
    }

    @Test func aChangeTwoLinksAwayIsAModificationThoughTheClassBetweenDidNotChange() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration(watchedModelTypes))
        try realm.write {
            realm.create(WatchedItem.self, value: ["id": 1, "keeper": ["id": 1, "pet": ["name": "rex"]]])
            realm.create(WatchedItem.self, value: ["id": 2, "keeper": ["id": 2, "pet": ["name": "max"]]])
        }
        let results = realm.objects(WatchedItem.self).sorted(byKeyPath: "id")
        let (everything, all) = observed(results, in: realm)
        let (keyPath, watched) = observed(results, keyPaths: ["keeper.pet.name"], in: realm)
        try realm.commitAndDeliver { realm.object(ofType: WatchedKeeper.self, forPrimaryKey: 2)!.pet!.name = "bob" }
        #expect(all.take() == [.update(modifications: [1])])
        #expect(watched.take() == [.update(modifications: [1])])
        withExtendedLifetime((everything, keyPath)) {}
    }

    @Test func swiftKeyPathsNameTheProperties() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        let events = Recorder<CollectionEvent>()
        // Of the elements' type, so that the root can be left out.
        let token = realm.objects(Chore.self).observe(keyPaths: [\.rank]) { events.record(CollectionEvent($0)) }
        realm.refresh()
        try realm.commitAndDeliver { realm.chore(1).title = "ignored" }
        try realm.commitAndDeliver { realm.chore(1).rank = 5 }
        #expect(events.take() == [.initial, .update(modifications: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func swiftKeyPathsGoOnThroughToOneLinks() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        try realm.write { realm.chore(1).badge = Badge(value: ["label": "gold"]) }
        let roster = try realm.write { realm.create(Roster.self, value: ["chores": [realm.chore(1)], "picks": ["a": realm.chore(1)]]) }
        let events = Recorder<String>()
        let results = realm.objects(Chore.self).observe(keyPaths: [\.badge?.label]) { events.record("results \(CollectionEvent($0))") }
        let list = roster.chores.observe(keyPaths: [\.badge?.label]) { events.record("list \(CollectionEvent($0))") }
        let picks = roster.picks.observe(keyPaths: [\.badge?.label]) { change in
            if case .update(_, _, _, let modifications) = change { events.record("picks \(modifications)") }
        }
        realm.refresh()
        #expect(events.take() == ["results initial", "list initial"])
        try realm.commitAndDeliver { realm.chore(1).badge!.level = 2 }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { realm.chore(1).badge!.label = "silver" }
        #expect(events.take() == ["results update(d: [], i: [], m: [0])", "list update(d: [], i: [], m: [0])", #"picks ["a"]"#])
        withExtendedLifetime((results, list, picks)) {}
    }

    @Test func observeOnANilQueueDeliversInTheRealmsContext() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let mailbox = Mailbox<CollectionEvent>()
        let queue: DispatchQueue? = nil
        let token = realm.objects(Chore.self).observe(keyPaths: [\.title], on: queue) { mailbox.put(CollectionEvent($0)) }
        realm.refresh()
        try realm.addChores([1])
        realm.refresh()
        #expect(mailbox.drain() == [.initial, .update(insertions: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func keyPathsDoNotReportObjectsWhoseWatchedPropertiesDidNotChange() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2])
        let roster = try realm.write { realm.create(Roster.self, value: ["chores": [realm.chore(1), realm.chore(2)]]) }
        let (resultsToken, results) = observed(realm.objects(Chore.self), keyPaths: ["title"], in: realm)
        let (listToken, list) = observed(roster.chores, keyPaths: ["title"], in: realm)
        // The change sets keep the columns set per table: the title column was set, on chore 1.
        try realm.commitAndDeliver {
            realm.chore(1).title = "renamed"
            realm.chore(2).rank = 99
        }
        #expect(results.take() == [.update(modifications: [0])])
        #expect(list.take() == [.update(modifications: [0])])
        withExtendedLifetime((resultsToken, listToken)) {}
    }

    @Test func keyPathsThroughLinkingObjectsReportTheObjectsLinkedFrom() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2, 3])
        let rosters = try realm.write {
            [realm.create(Roster.self, value: ["name": "a", "chores": [realm.chore(1), realm.chore(2)]]),
             realm.create(Roster.self, value: ["name": "b", "chores": [realm.chore(3), realm.chore(3)]])]
        }
        let (token, events) = observed(realm.objects(Chore.self), keyPaths: ["rosters.name"], in: realm)
        try realm.commitAndDeliver { rosters[0].name = "renamed" }
        #expect(events.take() == [.update(modifications: [0, 1])])
        try realm.commitAndDeliver { rosters[1].name = "renamed" }
        #expect(events.take() == [.update(modifications: [2])])
        try realm.commitAndDeliver { realm.chore(2).title = "not watched" }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func anObjectLinkedFromFurtherThanFourLinksIsNotModified() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        // Chains of six owners, each the best friend of the one before.
        let chains = try realm.write {
            (0..<8).map { chain in
                let owners = (1...6).map { realm.create(Owner.self, value: ["name": "\(chain)-\($0)"]) }
                for (owner, friend) in zip(owners, owners.dropFirst()) { owner.bestFriend = friend }
                return owners
            }
        }
        let (token, events) = observed(realm.objects(Owner.self).sorted(byKeyPath: "name"), in: realm)
        try realm.commitAndDeliver { for owners in chains { owners[5].dog = Pet(value: ["name": "Rex"]) } }
        // The last owner changed: the four before it reach it within four links, the first
        // does not, whichever the notifier looked at first.
        let expected = (0..<8).flatMap { chain in (1...5).map { chain * 6 + $0 } }
        #expect(events.take() == [.update(modifications: expected)])
        withExtendedLifetime(token) {}
    }

    @Test func severalCommitsArriveAsOneChange() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1, 2, 3])
        let (token, events) = observed(realm.objects(Chore.self).sorted(byKeyPath: "rank"), in: realm)
        writeOnAnotherThread(configuration) { $0.delete($0.object(ofType: Chore.self, forPrimaryKey: 1)!) }
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 4, "rank": 0]) }
        writeOnAnotherThread(configuration) { $0.object(ofType: Chore.self, forPrimaryKey: 3)!.title = "changed" }
        realm.refresh()
        // [1, 2, 3] → [4, 2, 3], in one change.
        #expect(events.take() == [.update(deletions: [0], insertions: [0], modifications: [2])])
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    @Test func aPrimaryKeyDeletedAndAddedAgainIsADeletionAndAnInsertion() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1, 2, 3])
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        try realm.commitAndDeliver {
            realm.delete(realm.chore(2))
            realm.create(Chore.self, value: ["id": 2, "title": "another"])
        }
        #expect(events.take() == [.update(deletions: [1], insertions: [1])])
        withExtendedLifetime(token) {}
    }

    @Test func aListReportsItsChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1, 2, 3, 4])
        let roster = try realm.write { realm.create(Roster.self, value: ["name": "week"]) }
        try realm.write { roster.chores.append(objectsIn: chores[0..<3]) }
        let (token, events) = observed(roster.chores, in: realm)
        try realm.commitAndDeliver { roster.chores.insert(chores[3], at: 0) }
        #expect(events.take() == [.update(insertions: [0])])
        try realm.commitAndDeliver { roster.chores.remove(at: 2) }
        #expect(events.take() == [.update(deletions: [2])])
        // [4, 1, 3] → [1, 3, 4]
        try realm.commitAndDeliver { roster.chores.move(from: 0, to: 2) }
        #expect(events.take() == [.update(deletions: [0], insertions: [2])])
        // An element's object modified; the list itself unchanged.
        try realm.commitAndDeliver { realm.chore(3).title = "changed" }
        #expect(events.take() == [.update(modifications: [1])])
        // Deleting an element's object removes it from the list.
        try realm.commitAndDeliver { realm.delete(realm.chore(1)) }
        #expect(events.take() == [.update(deletions: [0])])
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    @Test func aListOfValuesReportsItsChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let roster = try realm.write { realm.create(Roster.self, value: ["numbers": [5, 7, 5]]) }
        let (token, events) = observed(roster.numbers, in: realm)
        try realm.commitAndDeliver { roster.numbers.append(5) }
        #expect(events.take() == [.update(insertions: [3])])
        try realm.commitAndDeliver { roster.numbers.remove(at: 0) }
        // [5, 7, 5, 5] → [7, 5, 5]: one 5 fewer, counted as the last one gone.
        #expect(events.take().count == 1)
        #expect(Array(roster.numbers) == [7, 5, 5])
        // A value set in its place is a modification there, as in Realm.
        try realm.commitAndDeliver { roster.numbers[0] = 8 }
        #expect(events.take() == [.update(modifications: [0])])
        // A change of another property of the owner is not one of the list.
        try realm.commitAndDeliver { roster.name = "renamed" }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func aSetReportsItsChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let roster = try realm.write { realm.create(Roster.self, value: ["tags": ["a", "b"]]) }
        let chores = try realm.addChores([1, 2])
        let (tagsToken, tags) = observed(roster.tags, in: realm)
        let (membersToken, members) = observed(roster.members, in: realm)
        try realm.commitAndDeliver {
            roster.tags.insert("c")
            roster.tags.insert("a")
            roster.tags.remove("b")
            roster.members.insert(objectsIn: chores)
        }
        #expect(tags.take() == [.update(deletions: [1], insertions: [1])])
        #expect(members.take() == [.update(insertions: [0, 1])])
        try realm.commitAndDeliver { realm.chore(2).rank = 9 }
        #expect(members.take() == [.update(modifications: [1])])
        #expect(tags.take().isEmpty)
        withExtendedLifetime((tagsToken, membersToken)) {}
    }

    @Test func aMapReportsChangesByKey() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1])
        let roster = try realm.write { realm.create(Roster.self, value: ["scores": ["a": 1, "b": 2]]) }
        try realm.write { roster.picks["first"] = chores[0] }
        var events: [String] = []
        let token = roster.scores.observe { change in
            switch change {
            case .initial(let map): events.append("initial \(map.count)")
            case .update(_, let deletions, let insertions, let modifications): events.append("\(deletions) \(insertions) \(modifications)")
            case .error(let error): Issue.record("\(error)")
            }
        }
        var picks: [String] = []
        let picksToken = roster.picks.observe { change in
            if case .update(_, let deletions, let insertions, let modifications) = change {
                picks.append("\(deletions) \(insertions) \(modifications)")
            }
        }
        realm.refresh()
        #expect(events == ["initial 2"])
        try realm.commitAndDeliver {
            roster.scores["c"] = 3
            roster.scores["a"] = 10
            roster.scores["b"] = nil
        }
        #expect(events.last == #"["b"] ["c"] ["a"]"#)
        // The object a map value links to was modified.
        try realm.commitAndDeliver { realm.chore(1).title = "changed" }
        #expect(picks == [#"[] [] ["first"]"#])
        withExtendedLifetime((token, picksToken)) {}
    }

    @Test func linkingObjectsReportTheirChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let rosters = try realm.write { [realm.create(Roster.self, value: ["name": "a"]), realm.create(Roster.self, value: ["name": "b"])] }
        try realm.write { rosters[0].chores.append(chore) }
        let (token, events) = observed(chore.rosters, in: realm)
        try realm.commitAndDeliver { rosters[1].chores.append(chore) }
        #expect(events.take() == [.update(insertions: [1])])
        try realm.commitAndDeliver { rosters[1].name = "renamed" }
        #expect(events.take() == [.update(modifications: [1])])
        try realm.commitAndDeliver { rosters[0].chores.removeAll() }
        #expect(events.take() == [.update(deletions: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func settingAListElementIsAModification() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1, 2, 3, 4])
        let roster = try realm.write { realm.create(Roster.self, value: ["numbers": [1, 2, 3], "chores": Array(chores[0..<3])]) }
        let (numbersToken, numbers) = observed(roster.numbers, in: realm)
        let (choresToken, list) = observed(roster.chores, in: realm)
        try realm.commitAndDeliver {
            roster.numbers[1] = 20
            roster.chores[2] = chores[3]
        }
        #expect(numbers.take() == [.update(modifications: [1])])
        #expect(list.take() == [.update(modifications: [2])])
        // Elsewhere in the same commit, insertions and deletions stay what they are.
        try realm.commitAndDeliver {
            roster.numbers[0] = 10
            roster.numbers.append(4)
            roster.chores.remove(at: 0)
        }
        #expect(numbers.take() == [.update(insertions: [3], modifications: [0])])
        #expect(list.take() == [.update(deletions: [0])])
        #expect(Array(roster.numbers) == [10, 20, 3, 4])
        withExtendedLifetime((numbersToken, choresToken)) {}
    }

    @Test func resultsOfACollectionAreReadAgainForTheirClassesAndTheOwnersOnly() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let kennel = try realm.write { realm.create(Kennel.self, value: ["name": "k", "puppies": [["name": "Rex"], ["name": "Fido"]]]) }
        #expect(observedClassNames(kennel.puppies.filter("name != 'Fido'")) == ["Puppy", "Walker", "Kennel"])
        let (token, events) = observed(kennel.puppies.filter("name != 'Fido'"), in: realm)
        try realm.commitAndDeliver { realm.add(Dog()) }
        #expect(events.take().isEmpty)
        try realm.commitAndDeliver { kennel.puppies.removeAll() }
        #expect(events.take() == [.update(deletions: [0])])
        withExtendedLifetime(token) {}
    }

    @Test func resultsOfAListWhoseOwnerIsDeletedReportEveryObjectDeletedOnce() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let kennel = try realm.write { realm.create(Kennel.self, value: ["name": "k", "puppies": [["name": "Rex"], ["name": "Fido"]]]) }
        let (token, events) = observed(kennel.puppies.sorted(byKeyPath: "name"), in: realm)
        try realm.commitAndDeliver { realm.delete(kennel) }
        #expect(events.take() == [.update(deletions: [0, 1])])
        try realm.commitAndDeliver { realm.objects(Puppy.self).first!.name = "Max" }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func aBlockThatWritesDoesNotDelayTheOtherObservers() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        var wrote = false
        let writing = realm.objects(Chore.self).observe { change in
            if case .update = change, !wrote {
                wrote = true
                try! realm.write { realm.create(Badge.self, value: ["label": "b"]) }
            }
        }
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 2]) }
        realm.refresh()
        #expect(wrote)
        #expect(events.take() == [.update(insertions: [1])])
        withExtendedLifetime((writing, token)) {}
    }

    @Test func aBlockThatRefreshesDoesNotDelayTheOtherObservers() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let refreshing = realm.objects(Chore.self).observe { _ in realm.refresh() }
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 2]) }
        realm.refresh()
        #expect(events.take() == [.update(insertions: [1])])
        #expect(realm.objects(Chore.self).count == 2)
        withExtendedLifetime((refreshing, token)) {}
    }

    @Test func aBlockThatRefreshesToANewerVersionTakesTheOthersThereAtOnce() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var counts: [Int] = []
        let refreshing = realm.objects(Chore.self).observe { change in
            guard case .update(let chores, _, _, _) = change else { return }
            counts.append(chores.count)
            if counts.count == 1 {
                writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 2]) }
                realm.refresh()
            }
        }
        let (token, events) = observed(realm.objects(Chore.self), in: realm)
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 1]) }
        realm.refresh()
        // Both commits in one change for the observer after it; the block that refreshed is
        // told of the second at the next delivery (once per delivery: a block that writes
        // whenever it is called cannot keep a delivery going).
        #expect(events.take() == [.update(insertions: [0, 1])])
        #expect(counts == [1])
        realm.refresh()
        #expect(counts == [1, 2])
        #expect(events.take().isEmpty)
        withExtendedLifetime((refreshing, token)) {}
    }

    @Test func aListWhoseOwnerIsDeletedReportsEveryElementDeletedOnce() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chores = try realm.addChores([1, 2])
        let roster = try realm.write { realm.create(Roster.self) }
        try realm.write { roster.chores.append(objectsIn: chores) }
        let (token, events) = observed(roster.chores, in: realm)
        try realm.commitAndDeliver { realm.delete(roster) }
        #expect(events.take() == [.update(deletions: [0, 1])])
        try realm.commitAndDeliver { realm.chore(1).title = "changed" }
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func writeWithoutNotifyingSkipsOnlyThatWrite() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1, 2])
        let results = realm.objects(Chore.self)
        let (token, events) = observed(results, in: realm)
        let (otherToken, other) = observed(results, in: realm)
        // Another commit first: told when the write begins, before the write's own changes.
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 3]) }
        try realm.write(withoutNotifying: [token]) {
            #expect(events.take() == [.update(insertions: [2])])
            realm.create(Chore.self, value: ["id": 4])
        }
        realm.refresh()
        #expect(events.take().isEmpty)
        #expect(other.take() == [.update(insertions: [2]), .update(insertions: [3])])
        // Later changes are reported against the contents the skipped write left.
        try realm.commitAndDeliver { realm.delete(realm.chore(4)) }
        #expect(events.take() == [.update(deletions: [3])])
        withExtendedLifetime(otherToken) {}
        try RoundTripTests.verify(folder)
    }

    @Test func observationsPinNoVersionAfterTheyEnd() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var token: NotificationToken? = realm.objects(Chore.self).observe { _ in }
        realm.refresh()
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 1]) }
        token = nil
        realm.refresh()
        writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": 2]) }
        realm.refresh()
        // Only the version the realm reads.
        #expect(realm.numberOfActiveVersions == 1)
        withExtendedLifetime(token) {}
    }

    /// A table view's rows, updated as UIKit would (the only part of Realm's example faked).
    final class TableView {
        var rows: [Int] = []
        let source: () -> [Int]
        init(_ source: @escaping () -> [Int]) { self.source = source }
        enum RowAnimation { case automatic }
        func reloadData() { rows = source() }
        func beginUpdates() {}
        func endUpdates() {}
        func deleteRows(at indexPaths: [IndexPath], with: RowAnimation) {
            for path in indexPaths.sorted(by: >) { rows.remove(at: path.row) }
        }
        func insertRows(at indexPaths: [IndexPath], with: RowAnimation) {
            for path in indexPaths.sorted() { rows.insert(source()[path.row], at: path.row) }
        }
        func reloadRows(at indexPaths: [IndexPath], with: RowAnimation) {
            for path in indexPaths { rows[path.row] = source()[path.row] }
        }
    }

    /// Realm's documented example, as written there.
    final class ViewController {
        var notificationToken: NotificationToken?
        var tableView: TableView?

        func viewDidLoad(_ realm: Realm) {
            let results = realm.objects(Chore.self).filter("rank > 5").sorted(byKeyPath: "title")
            tableView = TableView { results.map(\.id) }
            // Observe Results Notifications
            notificationToken = results.observe { [weak self] (changes: RealmCollectionChange) in
                guard let tableView = self?.tableView else { return }
                switch changes {
                case .initial:
                    // Results are now populated and can be accessed without blocking the UI
                    tableView.reloadData()
                case .update(_, let deletions, let insertions, let modifications):
                    // Query results have changed, so apply them to the UITableView
                    tableView.beginUpdates()
                    tableView.deleteRows(at: deletions.map({ IndexPath(row: $0, section: 0) }), with: .automatic)
                    tableView.insertRows(at: insertions.map({ IndexPath(row: $0, section: 0) }), with: .automatic)
                    tableView.reloadRows(at: modifications.map({ IndexPath(row: $0, section: 0) }), with: .automatic)
                    tableView.endUpdates()
                case .error(let error):
                    // An error occurred while opening the Realm file on the background worker thread
                    fatalError("\(error)")
                }
            }
        }

        deinit {
            notificationToken?.invalidate()
        }
    }

    @Test func realmsTableViewExampleKeepsTheTableInStep() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores(Array(1...10))
        let controller = ViewController()
        controller.viewDidLoad(realm)
        realm.refresh()
        let results = realm.objects(Chore.self).filter("rank > 5").sorted(byKeyPath: "title")
        #expect(controller.tableView?.rows == results.map(\.id))
        try realm.commitAndDeliver {
            realm.chore(7).title = "a"
            realm.chore(2).rank = 9
            realm.delete(realm.chore(9))
            realm.create(Chore.self, value: ["id": 11, "title": "b", "rank": 6])
        }
        #expect(controller.tableView?.rows == results.map(\.id))
    }

    @Test func aBlockMayInvalidateItsOwnToken() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        var calls = 0
        var token: NotificationToken?
        token = realm.objects(Chore.self).observe { _ in
            calls += 1
            token?.invalidate()
        }
        realm.refresh()
        try realm.addChores([1])
        realm.refresh()
        #expect(calls == 1)
        token = nil
    }

    @Test @TestActor func aRealmOnAnActorDeliversItsOwnCommitsAsynchronously() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let mailbox = Mailbox<CollectionEvent>()
        let token = realm.objects(Chore.self).sorted(byKeyPath: "rank").observe { mailbox.put(CollectionEvent($0)) }
        #expect(await mailbox.next() == .initial)
        try await realm.asyncWrite { realm.create(Chore.self, value: ["id": 1, "rank": 5]) }
        #expect(await mailbox.next() == .update(insertions: [0]))
        try realm.write { realm.create(Chore.self, value: ["id": 2, "rank": 1]) }
        // Not from inside the write: posted to the realm's actor.
        #expect(mailbox.drain().isEmpty)
        #expect(await mailbox.next() == .update(insertions: [0]))
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func aRealmOnAnActorHearsOtherCommitsByItself() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try await Realm.open(configuration: configuration)
        let mailbox = Mailbox<CollectionEvent>()
        let token = realm.objects(Chore.self).observe { mailbox.put(CollectionEvent($0)) }
        #expect(await mailbox.next() == .initial)
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 1]) }
        #expect(await mailbox.next() == .update(insertions: [0]))
        withExtendedLifetime(token) {}
    }

    actor Watcher {
        var heard = 0
        func hear() { heard += 1 }
    }

    @Test @TestActor func observeOnAnActorDeliversCopiesThere() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let watcher = Watcher()
        let mailbox = Mailbox<CollectionEvent>()
        let token = await realm.objects(Chore.self).observe(on: watcher) { watcher, change in
            watcher.hear()
            if case .update(let chores, _, _, _) = change { #expect(chores.count == 2) }
            mailbox.put(CollectionEvent(change))
        }
        #expect(await mailbox.next() == .initial)
        try realm.addChores([2])
        #expect(await mailbox.next() == .update(insertions: [1]))
        #expect(await watcher.heard == 2)
        token.invalidate()
    }

    @Test @TestActor func observeOnAQueueDeliversCopiesThere() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let queue = DispatchQueue(label: "observer")
        let mailbox = Mailbox<CollectionEvent>()
        let token = realm.objects(Chore.self).observe(on: queue) { change in
            dispatchPrecondition(condition: .onQueue(queue))
            mailbox.put(CollectionEvent(change))
        }
        #expect(await mailbox.next() == .initial)
        try realm.addChores([1])
        #expect(await mailbox.next() == .update(insertions: [0]))
        token.invalidate()
    }
}

/// UIKit's table rows as index paths (Foundation on Linux has the type, not these members).
extension IndexPath {
    fileprivate init(row: Int, section: Int) { self.init(indexes: [section, row]) }
    fileprivate var row: Int { self[1] }
}
